"""`SchedulesController`: the Schedules panel's requests and the list it shows. No Qt.

Each method returns the request's `PendingRequest`; the list is reloaded after every change.
A refusal of `create` or `update` is left to the caller (the edit dialog shows it by the field it
names); other failures are announced by `failed`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest, ResultT
from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ErrorObject,
    QueueEmpty,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
    ScheduleUpdateParams,
)

logger = logging.getLogger(__name__)


class SchedulesController:
    """Events:
    changed(): `schedules` was replaced.
    failed(str): a request failed; a sentence for the author."""

    def __init__(self, api: SidecarApi) -> None:
        self.changed: Emitter[[]] = Emitter()
        self.failed: Emitter[[str]] = Emitter()
        self._api = api
        self.schedules: tuple[ScheduleInfo, ...] = ()
        self.default_timezone = ""

    def reload(self) -> PendingRequest[ScheduleListResult]:
        return self._api.schedule_list().then(self._on_list, self._failed)

    def create(self, params: ScheduleCreateParams) -> PendingRequest[ScheduleInfo]:
        """Chain `.then` for the new `ScheduleInfo` and for the refusal (`SCHEDULE_INVALID`,
        with the reason in `data["reason"]`)."""
        return self._api.schedule_create(params).then(self._reload_after, self._refused)

    def update(self, params: ScheduleUpdateParams) -> PendingRequest[ScheduleInfo]:
        """Chain `.then` for the changed `ScheduleInfo` and for the refusal (`SCHEDULE_INVALID`
        or `NO_SUCH_SCHEDULE`)."""
        return self._api.schedule_update(params).then(self._reload_after, self._refused)

    def set_enabled(self, schedule_id: str, enabled: bool) -> PendingRequest[ScheduleInfo]:
        send = self._api.schedule_resume if enabled else self._api.schedule_pause
        return self._change(send, schedule_id)

    def run_now(self, schedule_id: str) -> PendingRequest[ScheduleRunResult]:
        return self._change(self._api.schedule_run_now, schedule_id)

    def delete(self, schedule_id: str) -> PendingRequest[QueueEmpty]:
        return self._change(self._api.schedule_delete, schedule_id)

    def history(self, schedule_id: str) -> PendingRequest[ScheduleHistoryResult]:
        """Chain `.then` for the `ScheduleHistoryResult`."""
        params = ScheduleRef(schedule_id=schedule_id)
        return self._api.schedule_history(params).then(None, self._failed)

    def _change(
        self, send: Callable[[ScheduleRef], PendingRequest[ResultT]], schedule_id: str
    ) -> PendingRequest[ResultT]:
        pending = send(ScheduleRef(schedule_id=schedule_id))
        return pending.then(self._reload_after, self._failed)

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
