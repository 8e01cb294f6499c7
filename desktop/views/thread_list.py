"""`ThreadListWidget`: the threads, in channel folders, with New, Rename (in place), Delete (after
a confirm) and a context menu that moves a thread to another channel."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QModelIndex, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop.models.session import SessionState
from desktop.models.thread_list_model import THREAD_ID_ROLE, ThreadListModel

CHANNEL_MAX_LENGTH = 200
"""The longest channel name `thread/compaction` accepts."""


class ThreadListWidget(QWidget):
    """Shows `SessionState.threads` and follows `SessionState.selected_thread_id`.

    Channels are folders (closed until the author opens one, or one holds the selected thread);
    the author's open folders stay open when the list changes.

    Signals (the controller acts on them): `thread_selected(thread_id)`, `create_requested()`,
    `rename_requested(thread_id, title)`, `delete_requested(thread_id)` (after the confirm box,
    kept as `confirm_box` while it is open), `move_requested(thread_id, channel | None)` (from
    the context menu, kept as `context_menu`; "New channel…" asks in `channel_dialog`).
    """

    thread_selected = Signal(str)
    create_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    move_requested = Signal(str, object)

    def __init__(self, state: SessionState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._open_channels: set[str] = set()
        self.model = ThreadListModel(state.threads, self)
        self.model.rename_requested.connect(self.rename_requested)
        self.confirm_box: QMessageBox | None = None
        self.context_menu: QMenu | None = None
        self.channel_dialog: QInputDialog | None = None
        self.view = self._build_view()
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

    def _build_view(self) -> QTreeView:
        view = QTreeView()
        view.setModel(self.model)
        view.setHeaderHidden(True)
        view.setUniformRowHeights(True)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._on_context_menu_requested)
        view.selectionModel().selectionChanged.connect(self._on_selection_changed)
        view.selectionModel().currentChanged.connect(self._on_current_changed)
        view.expanded.connect(self._on_expanded)
        view.collapsed.connect(self._on_collapsed)
        return view

    def _lay_out(self) -> None:
        buttons = QHBoxLayout()
        for button in (self.new_button, self.rename_button, self.delete_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)

    def select_row(self, row: int) -> None:
        """Select a top-level row as the author would (tests use it too)."""
        self.view.setCurrentIndex(self.model.index(row, 0))

    def select_thread(self, thread_id: str) -> None:
        """Select a thread wherever it is filed, as the author would (tests use it too)."""
        index = self.model.index_of(thread_id)
        if index is not None:
            self._reveal(index)
            self.view.setCurrentIndex(index)

    def open_channels(self) -> set[str]:
        """The folders shown open."""
        return set(self._open_channels)

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

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        on_thread = self.model.thread_of(current) is not None
        self.rename_button.setEnabled(on_thread)
        self.delete_button.setEnabled(on_thread)

    def _on_state_selection_changed(self, thread_id: str | None) -> None:
        self._show_selection(thread_id)

    def _on_model_reset(self) -> None:
        for channel in sorted(self._open_channels):
            index = self.model.folder_index(channel)
            if index is None:
                self._open_channels.discard(channel)
            else:
                self.view.expand(index)
        self._show_selection(self._state.selected_thread_id)

    def _on_expanded(self, index: QModelIndex) -> None:
        channel = self.model.channel_of(index)
        if channel is not None:
            self._open_channels.add(channel)

    def _on_collapsed(self, index: QModelIndex) -> None:
        self._open_channels.discard(self.model.channel_of(index) or "")

    def _show_selection(self, thread_id: str | None) -> None:
        index = self.model.index_of(thread_id)
        enabled = index is not None
        self.rename_button.setEnabled(enabled)
        self.delete_button.setEnabled(enabled)
        if index is None:
            self.view.clearSelection()
            return
        self._reveal(index)
        if self.view.currentIndex() != index:
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)

    def _reveal(self, index: QModelIndex) -> None:
        folder = index.parent()
        if folder.isValid() and not self.view.isExpanded(folder):
            self.view.expand(folder)

    def _on_rename_clicked(self) -> None:
        index = self.view.currentIndex()
        if self.model.thread_of(index) is not None:
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

    def _on_context_menu_requested(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():  # the menu key: the current row
            index = self.view.currentIndex()
            pos = self.view.visualRect(index).center()
        thread = self.model.thread_of(index)
        if thread is None:
            return
        menu = self._build_thread_menu(thread.id, thread.channel)
        self.context_menu = menu
        menu.aboutToHide.connect(menu.deleteLater)
        menu.popup(self.view.viewport().mapToGlobal(pos))

    def _build_thread_menu(self, thread_id: str, current: str | None) -> QMenu:
        menu = QMenu(self)
        move = menu.addMenu("Move to channel")
        for channel in self.model.channels():
            action = move.addAction(channel)
            action.setCheckable(True)
            action.setChecked(channel == current)
            action.setEnabled(channel != current)
            action.triggered.connect(
                lambda _checked=False, name=channel: self.move_requested.emit(thread_id, name)
            )
        if self.model.channels():
            move.addSeparator()
        new = move.addAction("New channel…")
        new.triggered.connect(lambda: self._ask_new_channel(thread_id))
        none = move.addAction("No channel")
        none.setEnabled(current is not None)
        none.triggered.connect(lambda: self.move_requested.emit(thread_id, None))
        return menu

    def _ask_new_channel(self, thread_id: str) -> None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle("New channel")
        dialog.setLabelText("Channel name:")
        dialog.setInputMode(QInputDialog.InputMode.TextInput)
        field = dialog.findChild(QLineEdit)
        if field is not None:
            field.setMaxLength(CHANNEL_MAX_LENGTH)
        dialog.textValueSelected.connect(lambda text: self._on_channel_named(thread_id, text))
        dialog.finished.connect(lambda _result: self._on_channel_dialog_finished(dialog))
        self.channel_dialog = dialog
        dialog.open()

    def _on_channel_named(self, thread_id: str, text: str) -> None:
        name = text.strip()
        if name:
            self.move_requested.emit(thread_id, name)

    def _on_channel_dialog_finished(self, dialog: QInputDialog) -> None:
        if self.channel_dialog is dialog:
            self.channel_dialog = None
        dialog.deleteLater()
