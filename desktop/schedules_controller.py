"""`SchedulesController`: the Schedules panel's requests and the list it shows. No Qt.

Each method returns the request's `PendingRequest`; the list is reloaded after every change.
A refusal of `create` or `update` is left to the caller (the edit dialog shows it by the field it
names); other failures are announced by `failed`.
"""

from __future__ import annotations

import logging

from desktop.ipc.pending import PendingRequest, RequestSender
from desktop.models.emitter import Emitter
from sidecar.protocol import ErrorObject
from sidecar.protocol.queue import (
    QueueEmpty,
    ScheduleCreateParams,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleUpdateParams,
)

logger = logging.getLogger(__name__)


class SchedulesController:
    """Events:
    changed(): `schedules` was replaced.
    failed(str): a request failed; a sentence for the author."""

    def __init__(self, sender: RequestSender) -> None:
        self.changed: Emitter[[]] = Emitter()
        self.failed: Emitter[[str]] = Emitter()
        self._sender = sender
        self.schedules: tuple[ScheduleInfo, ...] = ()
        self.default_timezone = ""

    def reload(self) -> PendingRequest:
        return self._sender.request("schedule/list", QueueEmpty()).then(self._on_list, self._failed)

    def create(self, params: ScheduleCreateParams) -> PendingRequest:
        """Chain `.then` for the new `ScheduleInfo` and for the refusal (`SCHEDULE_INVALID`,
        with the reason in `data["reason"]`)."""
        return self._save("schedule/create", params)

    def update(self, params: ScheduleUpdateParams) -> PendingRequest:
        """Chain `.then` for the changed `ScheduleInfo` and for the refusal (`SCHEDULE_INVALID`
        or `NO_SUCH_SCHEDULE`)."""
        return self._save("schedule/update", params)

    def set_enabled(self, schedule_id: str, enabled: bool) -> PendingRequest:
        method = "schedule/resume" if enabled else "schedule/pause"
        return self._change(method, schedule_id)

    def run_now(self, schedule_id: str) -> PendingRequest:
        return self._change("schedule/run_now", schedule_id)

    def delete(self, schedule_id: str) -> PendingRequest:
        return self._change("schedule/delete", schedule_id)

    def history(self, schedule_id: str) -> PendingRequest:
        """Chain `.then` for the `ScheduleHistoryResult`."""
        return self._sender.request("schedule/history", ScheduleRef(schedule_id=schedule_id)).then(
            None, self._failed
        )

    def _change(self, method: str, schedule_id: str) -> PendingRequest:
        pending = self._sender.request(method, ScheduleRef(schedule_id=schedule_id))
        return pending.then(self._reload_after, self._failed)

    def _save(
        self, method: str, params: ScheduleCreateParams | ScheduleUpdateParams
    ) -> PendingRequest:
        return self._sender.request(method, params).then(self._reload_after, self._refused)

    def _reload_after(self, _result: object) -> None:
        self.reload()

    def _on_list(self, result: ScheduleListResult) -> None:
        self.schedules = result.schedules
        self.default_timezone = result.default_timezone
        self.changed.emit()

    def _refused(self, error: ErrorObject) -> None:
        logger.info("schedule refused: %s (%s, %s)", error.message, error.code, error.data)

    def _failed(self, error: ErrorObject) -> None:
        logger.info("schedule request failed: %s (%s)", error.message, error.code)
        self.failed.emit(error.message)
