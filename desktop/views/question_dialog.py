"""`QuestionDialog`: the agent asks the author something, with choices or free text."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from sidecar.protocol import QuestionInterrupt, QuestionValue


class QuestionDialog(QDialog):
    """Shows one question interrupt and emits `answered(interrupt_id, QuestionValue)`.

    With choices the author picks one (radio buttons); without, they type an answer. Closing
    the dialog leaves the question pending in the inbox.
    """

    answered = Signal(str, object)

    def __init__(
        self, interrupt: QuestionInterrupt, thread_title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.interrupt = interrupt
        self.thread_id: str | None = None
        self.setWindowTitle(interrupt.title or "Question")
        self.setModal(False)
        layout = QVBoxLayout(self)
        if thread_title:
            layout.addWidget(QLabel(f"From “{thread_title}”"))
        self.question_label = QLabel(interrupt.question)
        self.question_label.setTextFormat(Qt.TextFormat.PlainText)
        self.question_label.setWordWrap(True)
        layout.addWidget(self.question_label)
        if interrupt.body and interrupt.body != interrupt.question:
            body = QLabel(interrupt.body)
            body.setTextFormat(Qt.TextFormat.PlainText)
            body.setWordWrap(True)
            layout.addWidget(body)
        self.choice_buttons: list[QRadioButton] = []
        self._choices = QButtonGroup(self)
        self.answer_edit = QPlainTextEdit()
        if interrupt.choices:
            self._build_choices(layout)
        else:
            self.answer_edit.setPlaceholderText("Your answer")
            layout.addWidget(self.answer_edit, 1)
        self._build_buttons(layout)

    def _build_choices(self, layout: QVBoxLayout) -> None:
        self.answer_edit.hide()
        for choice in self.interrupt.choices:
            button = QRadioButton(choice)
            self._choices.addButton(button)
            self.choice_buttons.append(button)
            layout.addWidget(button)
        self._choices.buttonToggled.connect(self._on_input_changed)

    def _build_buttons(self, layout: QVBoxLayout) -> None:
        box = QDialogButtonBox()
        self.answer_button = QPushButton("Answer")
        box.addButton(self.answer_button, QDialogButtonBox.ButtonRole.AcceptRole)
        box.addButton(QDialogButtonBox.StandardButton.Cancel)
        box.rejected.connect(self.reject)
        self.answer_button.clicked.connect(self._on_answer_clicked)
        self.answer_edit.textChanged.connect(self._on_input_changed)
        layout.addWidget(box)
        self._on_input_changed()

    def answer_text(self) -> str:
        """The chosen choice, or the typed answer (stripped)."""
        if self.interrupt.choices:
            checked = self._choices.checkedButton()
            return checked.text() if checked is not None else ""
        return self.answer_edit.toPlainText().strip()

    def _on_input_changed(self, *_args: object) -> None:
        self.answer_button.setEnabled(bool(self.answer_text()))

    def _on_answer_clicked(self) -> None:
        answer = self.answer_text()
        if not answer:
            return
        self.answered.emit(self.interrupt.id, QuestionValue(answer=answer))
        self.accept()
