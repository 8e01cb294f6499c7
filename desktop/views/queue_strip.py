"""`QueueStrip`: the selected thread's queued messages, under its running turn.

Each row shows the mode, the receipt (queued or delivered) and the text; a queued one has Edit
(back into the composer, withdrawn from the queue) and Withdraw. A delegated plan's report
waiting for the turn shows by its header ("result · queued: Plan <id> finished: <status>"),
with neither: the author never typed it. Hidden when nothing waits. A delivered message leaves
the strip for the transcript.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.controllers.queue import QueueController
from desktop.models.session import SessionState
from desktop.models.transcript_entries import (
    announced_header,
    parse_announcement,
)
from sidecar.protocol import QueuedMessageInfo

_PREVIEW = 120


class QueueStrip(QWidget):
    """The selected thread's queue; Edit hands a message's text to `edit` (the composer)."""

    def __init__(
        self,
        queue: QueueController,
        state: SessionState,
        edit: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._queue = queue
        self._state = state
        self._edit = edit
        self.rows: list[tuple[QueuedMessageInfo, QLabel, QPushButton, QPushButton]] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        queue.changed.connect(self._on_changed)
        queue.delivered.connect(self._on_delivered)
        state.selection_changed.connect(lambda _thread_id: self.refresh())
        self.refresh()

    def _selected(self) -> str | None:
        return self._state.selected_thread_id

    def _on_delivered(self, message: QueuedMessageInfo) -> None:
        # The running turn (or the one it started) took it: it joins the transcript now (a
        # delegated plan's announcement as a row of its own kind).
        if message.thread_id == self._selected():
            self._state.transcript.add_local_message(
                message.text, announcement=message.announcement
            )

    def _on_changed(self, thread_id: str) -> None:
        if thread_id == self._selected():
            self.refresh()

    def refresh(self) -> None:
        for _info, label, edit, withdraw in self.rows:
            for widget in (label, edit, withdraw):
                widget.deleteLater()
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item is not None and item.layout() is not None:
                item.layout().deleteLater()  # pyright: ignore[reportOptionalMemberAccess]
        self.rows = []
        messages = self._queue.messages(self._selected())
        for info in messages:
            label = QLabel(_row_text(info))
            label.setWordWrap(True)
            edit = QPushButton("Edit")
            withdraw = QPushButton("Withdraw")
            announced = info.announcement
            if announced:
                label.setToolTip("A delegated plan's report: the agent takes it in its next turn")
            waiting = info.status == "queued" and not announced
            edit.setEnabled(waiting)
            withdraw.setEnabled(waiting)
            edit.clicked.connect(lambda _=False, i=info: self._on_edit(i))
            withdraw.clicked.connect(lambda _=False, i=info: self._on_withdraw(i))
            row = QHBoxLayout()
            row.addWidget(label, 1)
            row.addWidget(edit)
            row.addWidget(withdraw)
            self._layout.addLayout(row)
            self.rows.append((info, label, edit, withdraw))
        self.setVisible(bool(messages))

    def _on_edit(self, info: QueuedMessageInfo) -> None:
        self._queue.withdraw(info.thread_id, info.id).then(lambda _r: self._edit(info.text))

    def _on_withdraw(self, info: QueuedMessageInfo) -> None:
        self._queue.withdraw(info.thread_id, info.id)


def _row_text(info: QueuedMessageInfo) -> str:
    """A queued message's row: its mode, receipt and text (an announcement by its header: the
    author never typed it, so it is neither edited nor withdrawn)."""
    if info.announcement:
        return f"result · {info.status}: {announced_header(parse_announcement(info.text))}"
    text = info.text if len(info.text) <= _PREVIEW else info.text[: _PREVIEW - 1] + "…"
    return f"{info.mode} · {info.status}: {text}"
