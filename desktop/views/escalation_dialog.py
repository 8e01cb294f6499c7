"""`EscalationDialog`: a task stalled or failed after its retries; the author decides.

Retry runs the task again, Reassign runs it again under another profile, Skip lets the plan
go on without it (its dependents skip too), Abort plan stops the whole plan. Like the plan
dialog it stays open until the sidecar takes the answer, and shows a refusal in place.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.views.text import build_status_label
from sidecar.protocol import ErrorObject, EscalationInterrupt, EscalationValue

REASONS = {
    "stalled": "It stalled: no sign of progress for too long.",
    "failed": "It failed after all its attempts.",
    "budget": "It ran out of its token or cost budget.",
}


class EscalationDialog(QDialog):
    """Shows one `escalation` interrupt; emits `answered(interrupt_id, EscalationValue)`.

    `task_title` names the task when the run tree knows it. Closing the dialog leaves the
    escalation waiting in the inbox.
    """

    answered = Signal(str, object)

    def __init__(
        self,
        interrupt: EscalationInterrupt,
        thread_title: str = "",
        parent: QWidget | None = None,
        task_title: str = "",
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(interrupt.title or "A task needs you")
        self.setModal(False)
        layout = QVBoxLayout(self)
        if thread_title:
            layout.addWidget(QLabel(f"From “{escape(thread_title)}”"))
        layout.addLayout(self._build_facts(task_title))
        self._build_buttons(layout)
        self.resize(520, 300)

    def _build_facts(self, task_title: str) -> QFormLayout:
        interrupt = self.interrupt
        form = QFormLayout()
        task = interrupt.task_id or "?"
        self.task_label = _plain(f"{task_title} ({task})" if task_title else task)
        self.reason_label = _plain(REASONS.get(interrupt.reason, interrupt.reason))
        self.attempts_label = _plain(str(interrupt.attempts))
        self.error_text = _plain(interrupt.error or "")
        form.addRow("Task", self.task_label)
        form.addRow("Why", self.reason_label)
        form.addRow("Attempts", self.attempts_label)
        if interrupt.error:
            form.addRow("Error", self.error_text)
        if interrupt.body and interrupt.body != interrupt.error:
            form.addRow("", _plain(interrupt.body))
        return form

    def _build_buttons(self, layout: QVBoxLayout) -> None:
        self.profile_combo = QComboBox()
        self.profile_combo.addItems(list(self.interrupt.profiles))
        self.profile_combo.setEditable(not self.interrupt.profiles)
        self.retry_button = QPushButton("Retry")
        self.reassign_button = QPushButton("Reassign to")
        self.skip_button = QPushButton("Skip")
        self.abort_button = QPushButton("Abort plan")
        self.retry_button.clicked.connect(lambda: self._decide("retry"))
        self.reassign_button.clicked.connect(lambda: self._decide("reassign"))
        self.skip_button.clicked.connect(lambda: self._decide("skip"))
        self.abort_button.clicked.connect(lambda: self._decide("abort"))
        self.profile_combo.currentTextChanged.connect(lambda _text: self._update_buttons())
        self.error_label = build_status_label()
        reassign = QHBoxLayout()
        reassign.addWidget(self.reassign_button)
        reassign.addWidget(self.profile_combo, 1)
        row = QHBoxLayout()
        row.addWidget(self.abort_button)
        row.addStretch(1)
        row.addWidget(self.skip_button)
        row.addWidget(self.retry_button)
        layout.addLayout(reassign)
        layout.addWidget(self.error_label)
        layout.addLayout(row)
        self.retry_button.setDefault(True)
        self._update_buttons()

    def decision_value(self, action: str) -> EscalationValue:
        """The resume value; `reassign` carries the chosen profile."""
        profile = self.profile_combo.currentText().strip() if action == "reassign" else ""
        return EscalationValue.model_validate({"action": action, "profile": profile or None})

    def show_resume_error(self, error: ErrorObject) -> None:
        """The sidecar refused the answer: say why and let the author choose again."""
        self.error_label.setText(f"Not accepted: {error.message}")
        self.error_label.show()
        self._set_waiting(False)

    def _decide(self, action: str) -> None:
        self.error_label.hide()
        self._set_waiting(True)
        self.answered.emit(self.interrupt.id, self.decision_value(action))

    def _buttons(self) -> tuple[QPushButton, ...]:
        return (self.retry_button, self.reassign_button, self.skip_button, self.abort_button)

    def _set_waiting(self, waiting: bool) -> None:
        for button in self._buttons():
            button.setEnabled(not waiting)
        self.profile_combo.setEnabled(not waiting)
        if not waiting:
            self._update_buttons()

    def _update_buttons(self) -> None:
        self.reassign_button.setEnabled(bool(self.profile_combo.currentText().strip()))


def _plain(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label
