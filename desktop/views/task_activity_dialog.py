"""`TaskActivityDialog`: what a task's agent did, from its stored events (`task/events`).

The run tree shows a task's activity as it streams; this lists it from what the sidecar stored,
so it reads the same after the thread is reopened and after a restart: tool calls with their
outcome, progress lines (a strong agent's normalized events), messages, checks of its result.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.team import TASK_EVENTS_LIMIT
from desktop.models.activity import activity_of
from desktop.views.text import ERROR_COLOUR, build_status_label
from sidecar.protocol import TaskEventsResult

STATE = 1


class TaskActivityDialog(QDialog):
    """A task's activity lines (what, state), newest last; a line's tooltip is its detail.

    Signals: `refresh_requested()` (Refresh: ask for the events again).
    """

    refresh_requested = Signal()

    def __init__(self, task_title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Activity: {task_title}")
        self.setModal(False)
        self.resize(760, 480)
        self.summary_label = QLabel("Loading…")
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["What", "State"])
        self.list.setRootIsDecorated(False)
        self.list.setColumnWidth(0, 560)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_button.clicked.connect(self.refresh_requested)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)

    def lines(self) -> list[tuple[str, str]]:
        """The listed lines: (what, state)."""
        items = [self.list.topLevelItem(row) for row in range(self.list.topLevelItemCount())]
        return [(item.text(0), item.text(STATE)) for item in items if item is not None]

    def show_events(self, result: TaskEventsResult) -> None:
        self.error_label.hide()
        log = activity_of(result.events, TASK_EVENTS_LIMIT)
        self.list.clear()
        for entry in log.entries:
            item = QTreeWidgetItem(self.list, [entry.text, entry.state])
            item.setToolTip(0, entry.detail or entry.text)
            if entry.state in ("error", "fail"):
                item.setForeground(STATE, QBrush(QColor(ERROR_COLOUR)))
        if not log.entries:
            self.summary_label.setText("Nothing stored for this task yet")
            return
        older = " (older events were left out)" if result.has_older else ""
        self.summary_label.setText(
            f"{len(log.entries)} lines from {len(result.events)} events{older}"
        )
        self.list.scrollToBottom()

    def show_error(self, message: str) -> None:
        self.summary_label.setText("")
        self.error_label.setText(message)
        self.error_label.show()
