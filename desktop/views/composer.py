"""`ComposerWidget`: where the author types. Enter sends, Shift+Enter starts a new line."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QWidget

_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class ComposerEditorWidget(QPlainTextEdit):
    """A text edit whose plain Enter emits `submitted` instead of inserting a newline."""

    submitted = Signal()

    def keyPressEvent(self, e: QKeyEvent) -> None:
        shift = bool(e.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if e.key() in _ENTER_KEYS and not shift:
            e.accept()
            self.submitted.emit()
            return
        if e.key() in _ENTER_KEYS:
            self.insertPlainText("\n")
            e.accept()
            return
        super().keyPressEvent(e)


class ComposerWidget(QWidget):
    """Emits `message_submitted(text)` with the stripped text and clears itself.

    Messages and direct commands (`/tools`, `/call server__tool {json}`) go the same way; the
    sidecar tells them apart. `set_busy(True)` disables it while the thread runs; the draft stays.
    """

    message_submitted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = ComposerEditorWidget()
        self.editor.setPlaceholderText(
            "Message the agent (Enter sends, Shift+Enter for a new line; /tools lists tools)"
        )
        self.editor.setMaximumHeight(120)
        self.send_button = QPushButton("Send")
        self.editor.submitted.connect(self._on_editor_submitted)
        self.send_button.clicked.connect(self._on_editor_submitted)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.send_button)

    def set_busy(self, busy: bool) -> None:
        self.editor.setEnabled(not busy)
        self.send_button.setEnabled(not busy)

    def _on_editor_submitted(self) -> None:
        text = self.editor.toPlainText().strip()
        if not text or not self.editor.isEnabled():
            return
        self.editor.clear()
        self.message_submitted.emit(text)
