"""`SamplingDialog`: an MCP server asks to use the author's model; allow or deny, seeing exactly
what would be sent (system prompt, messages, token limit)."""

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

from desktop.views.text import build_code_view
from sidecar.protocol import SamplingInterrupt, SamplingValue


def render_request(interrupt: SamplingInterrupt) -> str:
    """The conversation the model would see, as plain text."""
    parts: list[str] = []
    if interrupt.system_prompt:
        parts.append(f"[system]\n{interrupt.system_prompt}")
    parts.extend(f"[{m.role}]\n{m.text}" for m in interrupt.messages)
    return "\n\n".join(parts)


def describe_limits(interrupt: SamplingInterrupt) -> str:
    pieces = [f"up to {interrupt.max_tokens} tokens"]
    if interrupt.temperature is not None:
        pieces.append(f"temperature {interrupt.temperature:g}")
    if interrupt.stop_sequences:
        pieces.append("stops at " + ", ".join(repr(s) for s in interrupt.stop_sequences))
    if interrupt.model_hints:
        pieces.append("prefers " + ", ".join(interrupt.model_hints))
    return "Answer " + "; ".join(pieces) + "."


class SamplingDialog(QDialog):
    """Shows one sampling interrupt and emits `answered(interrupt_id, SamplingValue)`.

    Non-modal; closing it without a decision leaves the request pending in the inbox. The
    reason goes with Deny only (the server sees it).
    """

    answered = Signal(str, object)

    def __init__(
        self, interrupt: SamplingInterrupt, thread_title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(interrupt.title or "Use your model?")
        self.setModal(False)
        layout = QVBoxLayout(self)
        where = f" (in “{thread_title}”)" if thread_title else ""
        self.server_label = QLabel(
            f"<b>{escape(interrupt.server)}</b> asks to use your model{escape(where)}"
        )
        self.body_label = QLabel(interrupt.body)
        self.body_label.setTextFormat(Qt.TextFormat.PlainText)
        self.body_label.setWordWrap(True)
        self.request_view = build_code_view(render_request(interrupt))
        self.request_view.setLineWrapMode(self.request_view.LineWrapMode.WidgetWidth)
        self.limits_label = QLabel(describe_limits(interrupt))
        self.limits_label.setWordWrap(True)
        for widget in (self.server_label, self.body_label):
            layout.addWidget(widget)
        layout.addWidget(QLabel("Request"))
        layout.addWidget(self.request_view, 1)
        layout.addWidget(self.limits_label)
        self._build_decision(layout)
        self.resize(620, 480)

    def _build_decision(self, layout: QVBoxLayout) -> None:
        self.reason_edit = QLineEdit()
        self.reason_edit.setPlaceholderText("Reason for denying (optional, the server sees it)")
        layout.addWidget(self.reason_edit)
        row = QHBoxLayout()
        self.deny_button = QPushButton("Deny")
        self.allow_button = QPushButton("Allow")
        self.deny_button.clicked.connect(lambda: self._decide("deny"))
        self.allow_button.clicked.connect(lambda: self._decide("allow"))
        row.addStretch(1)
        row.addWidget(self.deny_button)
        row.addWidget(self.allow_button)
        self.allow_button.setDefault(True)
        layout.addLayout(row)

    def decision_value(self, decision: str) -> SamplingValue:
        reason = self.reason_edit.text().strip() if decision == "deny" else ""
        return SamplingValue.model_validate({"decision": decision, "reason": reason or None})

    def _decide(self, decision: str) -> None:
        self.answered.emit(self.interrupt.id, self.decision_value(decision))
        self.accept()
