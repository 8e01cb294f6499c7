"""`ThreadListWidget`: the threads, with New, Rename (in place) and Delete (after a confirm)."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QListView,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.session import SessionState
from desktop.models.thread_list_model import THREAD_ID_ROLE, ThreadListModel


class ThreadListWidget(QWidget):
    """Shows `SessionState.threads` and follows `SessionState.selected_thread_id`.

    Signals (the controller acts on them): `thread_selected(thread_id)`, `create_requested()`,
    `rename_requested(thread_id, title)`, `delete_requested(thread_id)` (after the confirm box,
    kept as `confirm_box` while it is open).
    """

    thread_selected = Signal(str)
    create_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)

    def __init__(self, state: SessionState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.model = ThreadListModel(state.threads, self)
        self.model.rename_requested.connect(self.rename_requested)
        self.confirm_box: QMessageBox | None = None
        self.view = QListView()
        self.view.setModel(self.model)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        self.new_button = QPushButton("New")
        self.rename_button = QPushButton("Rename")
        self.delete_button = QPushButton("Delete")
        self.new_button.clicked.connect(self.create_requested)
        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self._lay_out()
        self.model.modelReset.connect(self._on_model_reset)
        state.selection_changed.connect(self._on_state_selection_changed)
        self._show_selection(state.selected_thread_id)

    def _lay_out(self) -> None:
        buttons = QHBoxLayout()
        for button in (self.new_button, self.rename_button, self.delete_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)

    def select_row(self, row: int) -> None:
        """Select a row as the author would (tests use it too)."""
        self.view.setCurrentIndex(self.model.index(row, 0))

    def _current_thread_id(self) -> str | None:
        index = self.view.currentIndex()
        return index.data(THREAD_ID_ROLE) if index.isValid() else None

    def _on_selection_changed(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if not indexes:
            return
        thread_id = indexes[0].data(THREAD_ID_ROLE)
        if thread_id and thread_id != self._state.selected_thread_id:
            self.thread_selected.emit(thread_id)

    def _on_state_selection_changed(self, thread_id: str | None) -> None:
        self._show_selection(thread_id)

    def _on_model_reset(self) -> None:
        self._show_selection(self._state.selected_thread_id)

    def _show_selection(self, thread_id: str | None) -> None:
        row = self.model.row_of(thread_id)
        enabled = row is not None
        self.rename_button.setEnabled(enabled)
        self.delete_button.setEnabled(enabled)
        if row is None:
            self.view.clearSelection()
            return
        index = self.model.index(row, 0)
        if self.view.currentIndex() != index:
            self.view.setCurrentIndex(index)

    def _on_rename_clicked(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.view.edit(index)

    def _on_delete_clicked(self) -> None:
        thread_id = self._current_thread_id()
        thread = self._state.threads.get(thread_id) if thread_id else None
        if thread is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Delete thread",
            f"Delete “{thread.title}” and everything in it? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _result: self._on_confirm_finished(box, thread.id))
        self.confirm_box = box
        box.open()

    def _on_confirm_finished(self, box: QMessageBox, thread_id: str) -> None:
        self.confirm_box = None
        confirmed = box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes
        box.deleteLater()
        if confirmed:
            self.delete_requested.emit(thread_id)
