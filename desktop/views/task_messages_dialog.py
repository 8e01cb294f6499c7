"""`TaskMessagesDialog`: what a task's agents sent each other (`task/envelopes`).

Drafts and reviews in reply order (each reply under the envelope it answers: draft, its review
with the verdict and comments, the revised draft, ...), the main agent's messages to the task,
handoffs to another profile, and the task's result. The selected envelope's whole text shows
below the list. A strong agent's raw and normalized trace files, named in its result, open in a
read-only viewer (`trace_requested`).
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.models.envelopes import (
    TRACE_KINDS,
    EnvelopeLine,
    agent_name,
    in_reply_order,
    trace_paths,
)
from desktop.views.text import build_status_label
from desktop.views.trace_viewer import TRACE_TITLES
from sidecar.protocol import TaskEnvelopesResult

SENDER, WHEN = 1, 2
INDENT = "    "


def envelope_details(line: EnvelopeLine) -> str:
    """The whole of one envelope as the pane below the list shows it."""
    envelope = line.envelope
    parts = [line.header, f"From {agent_name(envelope.sender)} to {agent_name(envelope.receiver)}"]
    if line.reply_to_header:
        parts.append(f"In reply to: {line.reply_to_header}")
    if envelope.artifacts:
        parts.append("Files: " + ", ".join(envelope.artifacts))
    text = "\n".join(parts)
    return f"{text}\n\n{line.body}" if line.body else text


class TaskMessagesDialog(QDialog):
    """A task's envelopes, in reply order, and the selected one's text.

    Signals: `refresh_requested()`; `trace_requested(kind, path)` ("Open raw trace", "Open
    normalized trace", enabled when the task's result names its trace files)."""

    refresh_requested = Signal()
    trace_requested = Signal(str, str)

    def __init__(self, task_title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Messages: {task_title}")
        self.setModal(False)
        self.resize(860, 600)
        self._lines: list[EnvelopeLine] = []
        self._traces: dict[str, str] = {}
        self.summary_label = QLabel("Loading…")
        self.list = QTreeWidget()
        self.list.setHeaderLabels(["Message", "From → to", "When"])
        self.list.setRootIsDecorated(False)
        self.list.setColumnWidth(0, 360)
        self.list.setColumnWidth(SENDER, 260)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.details_view = QPlainTextEdit()
        self.details_view.setReadOnly(True)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.list)
        splitter.addWidget(self.details_view)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.trace_buttons: dict[str, QPushButton] = {}
        for kind in TRACE_KINDS:
            button = buttons.addButton(
                f"Open {TRACE_TITLES[kind].lower()}", QDialogButtonBox.ButtonRole.ActionRole
            )
            button.setEnabled(False)
            button.clicked.connect(lambda _checked=False, k=kind: self._on_trace_clicked(k))
            self.trace_buttons[kind] = button
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_button.clicked.connect(self.refresh_requested)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.error_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(buttons)

    @property
    def lines(self) -> list[EnvelopeLine]:
        """The envelopes as listed, in reply order."""
        return list(self._lines)

    @property
    def traces(self) -> dict[str, str]:
        """The task's trace files (kind → path), when its result names them."""
        return dict(self._traces)

    def show_envelopes(self, result: TaskEnvelopesResult) -> None:
        self.error_label.hide()
        self._lines = in_reply_order(result.envelopes)
        self._traces = trace_paths(result.envelopes)
        self.list.clear()
        for line in self._lines:
            envelope = line.envelope
            mark = INDENT * (line.depth - 1) + "↳ " if line.depth else ""
            route = f"{agent_name(envelope.sender)} → {agent_name(envelope.receiver)}"
            when = time.strftime("%H:%M:%S", time.localtime(envelope.created_at))
            item = QTreeWidgetItem(self.list, [mark + line.header, route, when])
            item.setToolTip(0, line.body[:2000] or line.header)
        for kind, button in self.trace_buttons.items():
            button.setEnabled(kind in self._traces)
            button.setToolTip(self._traces.get(kind, "This task's result names no such file"))
        count = len(self._lines)
        self.summary_label.setText(
            f"{count} message{'s' if count != 1 else ''}" if count else "No messages yet"
        )
        if self._lines:
            self.select(0)
        else:
            self.details_view.clear()

    def show_error(self, message: str) -> None:
        self.summary_label.setText("")
        self.error_label.setText(message)
        self.error_label.show()

    def select(self, row: int) -> None:
        """Show the envelope at `row` below the list."""
        item = self.list.topLevelItem(row)
        if item is not None:
            self.list.setCurrentItem(item)

    def _on_list_current_item_changed(self, current: QTreeWidgetItem | None, _previous: object):
        row = self.list.indexOfTopLevelItem(current) if current is not None else -1
        if 0 <= row < len(self._lines):
            self.details_view.setPlainText(envelope_details(self._lines[row]))

    def _on_trace_clicked(self, kind: str) -> None:
        path = self._traces.get(kind)
        if path:
            self.trace_requested.emit(kind, path)
