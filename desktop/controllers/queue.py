"""`QueueController`: the messages waiting behind a running turn, per thread. No Qt.

Fed by `queue/update` notifications (and the `queued_id` of a `run/start` reply); the window
shows a thread's queued and delivered-but-unanswered messages under its running turn. A queued
message can be withdrawn, or taken back into the composer to edit (withdrawn, its text returned).
Each thread's default mode (what a message sent without one is queued as) is read with
`queue/list` and set with `queue/set_mode`.
"""

from __future__ import annotations

import logging

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ErrorObject,
    QueuedMessageInfo,
    QueueEmpty,
    QueueListParams,
    QueueListResult,
    QueueMode,
    QueueModeParams,
    QueueRef,
    QueueUpdateParams,
)

logger = logging.getLogger(__name__)

_SHOWN = frozenset({"queued", "delivered"})


class QueueController:
    """Events:
    changed(thread_id): the thread's queue changed.
    delivered(QueuedMessageInfo): a message just reached its turn (it is in the conversation).
    default_mode_changed(thread_id): the thread's known default mode changed, or a change of it
        was refused (what shows it shows `default_mode` again).
    failed(str): a request failed; a sentence for the author."""

    def __init__(self, api: SidecarApi) -> None:
        self.changed: Emitter[[str]] = Emitter()
        self.delivered: Emitter[[QueuedMessageInfo]] = Emitter()
        self.default_mode_changed: Emitter[[str]] = Emitter()
        self.failed: Emitter[[str]] = Emitter()
        self._api = api
        self._by_thread: dict[str, dict[str, QueuedMessageInfo]] = {}
        self._default_modes: dict[str, QueueMode] = {}

    def handle_update(self, params: QueueUpdateParams) -> None:
        message = params.message
        messages = self._by_thread.setdefault(message.thread_id, {})
        before = messages.get(message.id)
        if message.status == "delivered" and (before is None or before.status != "delivered"):
            self.delivered.emit(message)
        if message.status in _SHOWN:
            messages[message.id] = message
        else:
            messages.pop(message.id, None)
        self.changed.emit(message.thread_id)

    def messages(self, thread_id: str | None) -> list[QueuedMessageInfo]:
        """Queued and delivered-not-yet-answered messages, oldest first."""
        if thread_id is None:
            return []
        return sorted(self._by_thread.get(thread_id, {}).values(), key=lambda m: m.created_at)

    def withdraw(self, thread_id: str, message_id: str) -> PendingRequest[QueuedMessageInfo]:
        params = QueueRef(thread_id=thread_id, message_id=message_id)
        return self._api.queue_withdraw(params).then(
            lambda info: self.handle_update(QueueUpdateParams(message=info)), self._failed
        )

    def default_mode(self, thread_id: str) -> QueueMode | None:
        """The thread's default mode as last read or set (None: not known yet)."""
        return self._default_modes.get(thread_id)

    def load_default_mode(self, thread_id: str) -> PendingRequest[QueueListResult]:
        """Read the thread's default mode (`queue/list`); a failure is logged, not shown: the
        mode is only shown as a check mark, and it stays as it was."""

        def on_list(result: QueueListResult) -> None:
            self._note_default_mode(thread_id, result.default_mode)

        def on_error(error: ErrorObject) -> None:
            logger.info("reading the queue mode failed: %s (%s)", error.message, error.code)

        params = QueueListParams(thread_id=thread_id)
        return self._api.queue_list(params).then(on_list, on_error)

    def set_default_mode(self, thread_id: str, mode: QueueMode) -> PendingRequest[QueueEmpty]:
        """What a message sent while the thread works is queued as, unless it names a mode."""

        def on_error(error: ErrorObject) -> None:
            self._failed(error, "The thread's queue mode could not change")
            self.default_mode_changed.emit(thread_id)

        params = QueueModeParams(thread_id=thread_id, mode=mode)
        return self._api.queue_set_mode(params).then(
            lambda _empty: self._note_default_mode(thread_id, mode), on_error
        )

    def _note_default_mode(self, thread_id: str, mode: QueueMode) -> None:
        if self._default_modes.get(thread_id) != mode:
            self._default_modes[thread_id] = mode
            self.default_mode_changed.emit(thread_id)

    def _failed(
        self, error: ErrorObject, what: str = "The queued message could not change"
    ) -> None:
        logger.info("queue request failed: %s (%s)", error.message, error.code)
        self.failed.emit(f"{what}: {error.message}")
