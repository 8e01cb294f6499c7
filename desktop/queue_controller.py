"""`QueueController`: the messages waiting behind a running turn, per thread. No Qt.

Fed by `queue/update` notifications (and the `queued_id` of a `run/start` reply); the window
shows a thread's queued and delivered-but-unanswered messages under its running turn. A queued
message can be withdrawn, or taken back into the composer to edit (withdrawn, its text returned).
"""

from __future__ import annotations

import logging

from desktop.ipc.pending import PendingRequest, RequestSender
from desktop.models.emitter import Emitter
from sidecar.protocol import ErrorObject
from sidecar.protocol.queue import QueuedMessageInfo, QueueRef, QueueUpdateParams

logger = logging.getLogger(__name__)

_SHOWN = frozenset({"queued", "delivered"})


class QueueController:
    """Events:
    changed(thread_id): the thread's queue changed.
    delivered(QueuedMessageInfo): a message just reached its turn (it is in the conversation).
    failed(str): a request failed; a sentence for the author."""

    def __init__(self, sender: RequestSender) -> None:
        self.changed: Emitter[[str]] = Emitter()
        self.delivered: Emitter[[QueuedMessageInfo]] = Emitter()
        self.failed: Emitter[[str]] = Emitter()
        self._sender = sender
        self._by_thread: dict[str, dict[str, QueuedMessageInfo]] = {}

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

    def withdraw(self, thread_id: str, message_id: str) -> PendingRequest:
        params = QueueRef(thread_id=thread_id, message_id=message_id)
        return self._sender.request("queue/withdraw", params).then(
            lambda info: self.handle_update(QueueUpdateParams(message=info)), self._failed
        )

    def _failed(self, error: ErrorObject) -> None:
        logger.info("queue request failed: %s (%s)", error.message, error.code)
        self.failed.emit(f"The queued message could not change: {error.message}")
