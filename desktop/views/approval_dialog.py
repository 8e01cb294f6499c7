"""`ApprovalDialog`: may the agent make this tool call? Allow once, for the thread, or deny.

A memory change asked about because the turn read untrusted content shows the memory before and
after (and their diff) and offers only "Save this change" (allowed once: no grant is kept) or
"Don't save"."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.memory import describe_memory_change
from desktop.views.text import DiffHighlighter, build_code_view, pretty_json
from sidecar.protocol import ApprovalInterrupt, ApprovalValue, MemoryChangeInfo

UNCERTAIN_WARNING = (
    "This call may already have run before the sidecar stopped. Allowing it runs it again."
)


class ApprovalDialog(QDialog):
    """Shows one approval interrupt and emits the author's decision.

    Non-modal: it emits `answered(interrupt_id, ApprovalValue)` and closes; closing it without a
    decision leaves the interrupt pending (it stays in the inbox). The reason field goes with
    Deny only.
    """

    answered = Signal(str, object)

    def __init__(
        self, interrupt: ApprovalInterrupt, thread_title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(f"Approve: {interrupt.title}" if interrupt.title else "Approve")
        self.setModal(False)
        layout = QVBoxLayout(self)
        self._build_header(layout, thread_title)
        if interrupt.memory is not None:
            self._build_memory(layout, interrupt.memory)
        self._build_details(layout)
        self._build_decision(layout)
        if interrupt.memory is not None:
            self._as_memory_decision()
        self.resize(640, 520 if interrupt.diff else 360)

    def _build_header(self, layout: QVBoxLayout, thread_title: str) -> None:
        interrupt = self.interrupt
        self.title_label = QLabel(f"<b>{escape(interrupt.title)}</b>")
        self.body_label = QLabel(interrupt.body)
        self.body_label.setTextFormat(Qt.TextFormat.PlainText)
        self.body_label.setWordWrap(True)
        where = f" in “{thread_title}”" if thread_title else ""
        self.tool_label = QLabel(
            f"Tool <code>{escape(interrupt.tool)}</code> on server "
            f"<code>{escape(interrupt.server)}</code>{escape(where)}"
        )
        self.uncertain_label = QLabel("⚠ " + UNCERTAIN_WARNING)
        self.uncertain_label.setWordWrap(True)
        self.uncertain_label.setStyleSheet("color: #9a6700; font-weight: bold;")
        self.uncertain_label.setVisible(interrupt.uncertain)
        for widget in (self.title_label, self.body_label, self.tool_label, self.uncertain_label):
            layout.addWidget(widget)

    def _build_memory(self, layout: QVBoxLayout, change: MemoryChangeInfo) -> None:
        """The memory as it is and as it would be, side by side, and what the turn had read."""
        self.tool_label.setText(
            f"Memory change: <code>{escape(change.op)}</code> of <code>{escape(change.key)}</code>"
        )
        self.untrusted_label = QLabel(
            "⚠ The turn read content you did not write: " + change.untrusted
        )
        self.untrusted_label.setTextFormat(Qt.TextFormat.PlainText)
        self.untrusted_label.setWordWrap(True)
        self.untrusted_label.setStyleSheet("color: #9a6700;")
        before, after = describe_memory_change(change)
        self.memory_before_view = build_code_view(before)
        self.memory_after_view = build_code_view(after)
        row = QHBoxLayout()
        for title, view in (("Now", self.memory_before_view), ("After", self.memory_after_view)):
            column = QVBoxLayout()
            column.addWidget(QLabel(title))
            view.setMaximumHeight(120)
            column.addWidget(view)
            row.addLayout(column)
        layout.addWidget(self.untrusted_label)
        layout.addLayout(row)

    def _as_memory_decision(self) -> None:
        """A memory change is saved once or not at all: no grant for the thread or for good."""
        self.allow_once_button.setText("Save this change")
        self.deny_button.setText("Don't save")
        self.allow_thread_button.hide()
        self.allow_always_button.hide()
        self.reason_edit.setPlaceholderText("Why not (optional, the agent sees it)")
        self.diff_label.setText("Memory: now → after")

    def _build_details(self, layout: QVBoxLayout) -> None:
        self.arguments_view = build_code_view(pretty_json(self.interrupt.arguments))
        self.arguments_view.setMaximumHeight(160)
        layout.addWidget(QLabel("Arguments"))
        layout.addWidget(self.arguments_view)
        self.diff_view = build_code_view(self.interrupt.diff or "")
        self._diff_highlighter = DiffHighlighter(self.diff_view.document())
        self.diff_label = QLabel("Changes")
        layout.addWidget(self.diff_label)
        layout.addWidget(self.diff_view, 1)
        has_diff = bool(self.interrupt.diff)
        self.diff_label.setVisible(has_diff)
        self.diff_view.setVisible(has_diff)

    def _build_decision(self, layout: QVBoxLayout) -> None:
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("Reason for denying (optional, the agent sees it)")
        layout.addWidget(self.reason_edit)
        row = QHBoxLayout()
        self.allow_once_button = QPushButton("Allow once")
        self.allow_thread_button = QPushButton("Allow for this thread")
        self.allow_always_button = QPushButton("Allow in every thread")
        self.allow_always_button.setToolTip(
            "Run this tool without asking in every thread, until revoked in the Grants panel"
        )
        self.allow_always_button.clicked.connect(lambda: self._decide("allow_always"))
        self.deny_button = QPushButton("Deny")
        self.allow_once_button.clicked.connect(lambda: self._decide("allow_once"))
        self.allow_thread_button.clicked.connect(lambda: self._decide("allow_thread"))
        self.deny_button.clicked.connect(lambda: self._decide("deny"))
        row.addStretch(1)
        buttons = (
            self.deny_button,
            self.allow_always_button,
            self.allow_thread_button,
            self.allow_once_button,
        )
        for button in buttons:
            row.addWidget(button)
        self.allow_once_button.setDefault(True)
        layout.addLayout(row)

    def decision_value(self, decision: str) -> ApprovalValue:
        """The resume value for a decision: the reason field goes with `deny` only."""
        reason = self.reason_edit.text().strip() if decision == "deny" else ""
        return ApprovalValue.model_validate({"decision": decision, "reason": reason or None})

    def _decide(self, decision: str) -> None:
        self.answered.emit(self.interrupt.id, self.decision_value(decision))
        self.accept()
