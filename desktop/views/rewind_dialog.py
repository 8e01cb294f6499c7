"""Undo in the transcript: "Rewind to here", "Fork from here" and "Redo" on a turn's message
rows, and the preview dialog that lists the files (and conflicts, and effects that stay) before
the author confirms a rewind.

Installed on a `TranscriptView` from outside (`install_turn_actions`), so the transcript's own
rendering and Find are untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QMenu,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.undo import UndoController
from desktop.models.session import SessionState
from desktop.models.transcript import MessageEntry
from desktop.views.transcript_view import TranscriptView
from sidecar.protocol import ErrorObject, ThreadCheckpointsResult, ThreadRewindResult

_STATUS_WORDS = {
    "restored": "will be restored",
    "unchanged": "already as it was",
    "conflict": "edited by you since: left alone",
    "forced": "edited by you since: replaced (your version kept)",
}


@dataclass(frozen=True, slots=True)
class TurnRef:
    """A turn as a row knows it: its message id when the sidecar gave one; its text and how
    many later author messages have the same text otherwise."""

    message_id: str | None
    text: str
    later_same: int


class RewindPreviewDialog(QDialog):
    """What a rewind will change; Rewind confirms, with `force` when the author ticks it."""

    def __init__(self, preview: ThreadRewindResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Redo" if preview.direction == "redo" else "Rewind to here")
        layout = QVBoxLayout(self)
        turns = len(preview.turns)
        verb = "brings back" if preview.direction == "redo" else "undoes"
        layout.addWidget(QLabel(f"This {verb} {turns} turn(s) and these files:"))
        self.files = QListWidget()
        for changed in preview.files:
            self.files.addItem(f"{changed.path}: {_STATUS_WORDS[changed.status]}")
        layout.addWidget(self.files)
        self.effects = QListWidget()
        for effect in preview.effects:
            self.effects.addItem(f"{effect.server}: {effect.tool} (cannot be undone)")
        if preview.effects:
            layout.addWidget(QLabel("These effects stay:"))
            layout.addWidget(self.effects)
        self.force = QCheckBox("Replace the files I edited (my versions are kept)")
        self.force.setVisible(bool(preview.conflicts))
        layout.addWidget(self.force)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText("Redo" if preview.direction == "redo" else "Rewind")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)


class TurnActions(QObject):
    """The context menu of the transcript's message rows, and the rewind's preview (a child of
    the view, found with `view.findChild(TurnActions)`)."""

    def __init__(self, view: TranscriptView, state: SessionState, undo: UndoController) -> None:
        super().__init__(view)
        self._view = view
        self._state = state
        self._undo = undo
        self.dialog: RewindPreviewDialog | None = None
        rows = view.list_view
        rows.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        rows.customContextMenuRequested.connect(self._on_custom_context_menu_requested)

    def turn_of(self, row: int) -> TurnRef | None:
        """The turn a row belongs to: the author's message at or above it."""
        transcript = self._view.model.transcript
        for index in range(row, -1, -1):
            entry = transcript.peek(index)
            if isinstance(entry, MessageEntry) and entry.role == "user":
                later = sum(
                    1
                    for e in transcript.entries[index + 1 :]
                    if isinstance(e, MessageEntry) and e.role == "user" and e.text == entry.text
                )
                return TurnRef(entry.message_id if not entry.local else None, entry.text, later)
        return None

    def menu_for(self, row: int) -> QMenu:
        menu = QMenu(self._view)
        thread_id = self._state.selected_thread_id
        turn = self.turn_of(row)
        if thread_id is not None and turn is not None:
            rewind = menu.addAction("Rewind to here")
            rewind.triggered.connect(
                lambda: self._resolve(thread_id, turn, lambda c: self.open_preview(thread_id, c))
            )
            fork = menu.addAction("Fork from here")
            fork.triggered.connect(
                lambda: self._resolve(
                    thread_id, turn, lambda c: self._undo.fork(thread_id, c, self._failed)
                )
            )
        redo_to = self._undo.redo_to.get(thread_id or "")
        if thread_id is not None and redo_to is not None:
            redo = menu.addAction("Redo")
            redo.triggered.connect(lambda: self.open_preview(thread_id, redo_to))
        return menu

    def _resolve(self, thread_id: str, turn: TurnRef, then: Callable[[str], object]) -> None:
        """The turn's checkpoint id: the row's message id, or (a message sent in this window,
        not echoed with its id) the live checkpoint with its text, counted from the end."""
        if turn.message_id is not None:
            then(turn.message_id)
            return

        def found(result: ThreadCheckpointsResult) -> None:
            same = [
                c.checkpoint_id
                for c in result.checkpoints
                if not c.undone and turn.text.startswith(c.text)
            ]
            if len(same) > turn.later_same:
                then(same[-1 - turn.later_same])

        self._undo.checkpoints(thread_id, found, self._failed)

    def open_preview(self, thread_id: str, checkpoint_id: str) -> None:
        def shown(preview: ThreadRewindResult) -> None:
            dialog = self.dialog = RewindPreviewDialog(preview, self._view)
            dialog.accepted.connect(lambda: self._confirm(thread_id, checkpoint_id, dialog))
            dialog.open()

        self._undo.preview(thread_id, checkpoint_id, shown, self._failed)

    def _confirm(self, thread_id: str, checkpoint_id: str, dialog: RewindPreviewDialog) -> None:
        force = dialog.force.isChecked()
        self._undo.rewind(
            thread_id, checkpoint_id, force=force, done=lambda _r: None, failed=self._failed
        )

    def _on_custom_context_menu_requested(self, point: QPoint) -> None:
        index = self._view.list_view.indexAt(point)
        if not index.isValid():
            return
        menu = self.menu_for(index.row())
        if not menu.isEmpty():
            menu.popup(self._view.list_view.viewport().mapToGlobal(point))

    def _failed(self, error: ErrorObject) -> None:
        QMessageBox.warning(self._view, "Undo", error.message)


def install_turn_actions(
    view: TranscriptView, state: SessionState, undo: UndoController
) -> TurnActions:
    """Offer "Rewind to here", "Fork from here" and "Redo" on the view's message rows."""
    return TurnActions(view, state, undo)
