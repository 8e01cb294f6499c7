"""`SubThreadDialog`: a task's sub-thread (its subagent's own conversation), read-only.

The same transcript view as the author's thread (older pages as one scrolls up, Ctrl+F to find),
over a transcript of its own and without a composer: nothing is sent from here.
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from desktop.controllers.team import SubThreadReader
from desktop.views.text import build_status_label
from desktop.views.transcript_view import TranscriptView
from sidecar.protocol import ErrorObject


class SubThreadDialog(QDialog):
    """The sub-thread `reader` loads, in a `TranscriptView` (`transcript`)."""

    def __init__(self, reader: SubThreadReader, task_title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.reader = reader
        self.setWindowTitle(f"Transcript: {task_title}")
        self.setModal(False)
        self.resize(820, 640)
        self.note_label = QLabel(
            f"What the subagent of “{task_title}” said and did, read-only "
            f"(sub-thread {reader.thread_id})."
        )
        self.note_label.setWordWrap(True)
        self.transcript = TranscriptView(reader.transcript, reader.pager)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_button.clicked.connect(self.load)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(buttons)

    def load(self) -> None:
        """Read the sub-thread's newest page (again)."""
        self.error_label.hide()
        self.reader.load().then(None, self._on_load_failed)

    def _on_load_failed(self, error: ErrorObject) -> None:
        self.error_label.setText(f"Loading the transcript failed: {error.message}")
        self.error_label.show()
