"""`ThreadListWidget`: the threads, in channel folders, with New, Rename (in place), Delete (after
a confirm) and a context menu that moves a thread to another channel, sets what a message sent
while it works is queued as, turns its compaction on or off (or compacts now) and exports it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from PySide6.QtCore import QItemSelection, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
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

from desktop.controllers import PendingRequest
from desktop.controllers.memory import CompactionMode, ExportFormat
from desktop.models.emitter import Emitter
from desktop.models.session import SessionState
from desktop.views.thread_list_model import THREAD_ID_ROLE, ThreadListModel
from sidecar.protocol import QueueMode

CHANNEL_MAX_LENGTH = 200
"""The longest channel name `thread/compaction` accepts."""

QUEUE_MODE_CHOICES: dict[QueueMode, tuple[str, str]] = {
    "steer": ("Steer", "The running turn reads it before its next model call"),
    "collect": ("Collect", "When the turn ends, all the queued messages become one turn"),
    "followup": ("Follow-up", "When the turn ends, each becomes its own turn, in order"),
    "interrupt": ("Interrupt", "The turn stops at once and the message starts a new one"),
}
COMPACTION_CHOICES: dict[CompactionMode, tuple[str, str]] = {
    "auto": ("Automatic", "Older messages are summarized when the context outgrows its budget"),
    "off": ("Off", "Nothing is summarized; the oldest messages that do not fit are left out"),
}
K = TypeVar("K", bound=str)

EXPORT_CHOICES: dict[ExportFormat, str] = {
    "markdown": "Export as Markdown…",
    "json": "Export as JSON…",
}


class ThreadQueueModes(Protocol):
    """What the menu asks of the queue controller (`QueueController` provides it)."""

    default_mode_changed: Emitter[[str]]

    def default_mode(self, thread_id: str) -> QueueMode | None: ...
    def load_default_mode(self, thread_id: str) -> PendingRequest: ...
    def set_default_mode(self, thread_id: str, mode: QueueMode) -> PendingRequest: ...


class ThreadCompaction(Protocol):
    """What the menu asks of the memory controller (`MemoryController` provides it)."""

    compaction_changed: Emitter[[str]]

    def compaction_mode(self, thread_id: str) -> CompactionMode | None: ...
    def load_compaction(self, thread_id: str) -> PendingRequest: ...
    def set_compaction(self, thread_id: str, mode: CompactionMode) -> PendingRequest: ...
    def compact_now(self, thread_id: str) -> PendingRequest: ...


@dataclass
class ThreadMenuOptions:
    """The open context menu's checkable options, kept to show replies that arrive while it
    is open (the current mode is read again each time the menu opens)."""

    thread_id: str
    queue_modes: dict[QueueMode, QAction] = field(default_factory=dict[QueueMode, QAction])
    compaction: dict[CompactionMode, QAction] = field(default_factory=dict[CompactionMode, QAction])
    compact_now: QAction | None = None
    exports: dict[ExportFormat, QAction] = field(default_factory=dict[ExportFormat, QAction])


class ThreadListWidget(QWidget):
    """Shows `SessionState.threads` and follows `SessionState.selected_thread_id`.

    Channels are folders (closed until the author opens one, or one holds the selected thread);
    the author's open folders stay open when the list changes.

    Signals (the controller acts on them): `thread_selected(thread_id)`, `create_requested()`,
    `rename_requested(thread_id, title)`, `delete_requested(thread_id)` (after the confirm box,
    kept as `confirm_box` while it is open), `move_requested(thread_id, channel | None)` (from
    the context menu, kept as `context_menu`; "New channel…" asks in `channel_dialog`),
    `export_requested(thread_id, "markdown" | "json")` (the window asks where to save it).

    With a queue controller attached (`attach_queue`) the menu offers "Queue mode while it
    works" (the thread's default mode checked); with a memory controller (`attach_memory`),
    "Compaction" (automatic or off, checked; "Compact now") and the two exports. The open
    menu's options are `menu_options`; their checks follow the replies.
    """

    thread_selected = Signal(str)
    create_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    move_requested = Signal(str, object)
    export_requested = Signal(str, str)

    def __init__(self, state: SessionState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._open_channels: set[str] = set()
        self.model = ThreadListModel(state.threads, self)
        self.model.rename_requested.connect(self.rename_requested)
        self.confirm_box: QMessageBox | None = None
        self.context_menu: QMenu | None = None
        self.menu_options: ThreadMenuOptions | None = None
        self.channel_dialog: QInputDialog | None = None
        self._queue: ThreadQueueModes | None = None
        self._memory: ThreadCompaction | None = None
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

    def attach_queue(self, queue: ThreadQueueModes) -> None:
        """Offer the thread's default queue mode in its context menu."""
        self._queue = queue
        queue.default_mode_changed.connect(self._on_options_changed)

    def attach_memory(self, memory: ThreadCompaction) -> None:
        """Offer the thread's compaction and its exports in its context menu."""
        self._memory = memory
        memory.compaction_changed.connect(self._on_options_changed)

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

    def select_next(self, step: int = 1) -> None:
        """Select the thread `step` rows below the selected one in the list's order (above,
        when negative), going round at the ends: Ctrl+Tab and Ctrl+Shift+Tab."""
        ids = self.model.thread_ids()
        if not ids:
            return
        current = self._state.selected_thread_id
        at = ids.index(current) if current in ids else (-1 if step > 0 else 0)
        self.select_thread(ids[(at + step) % len(ids)])

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
        menu.destroyed.connect(lambda _menu=None: self._forget_menu(menu))
        menu.popup(self.view.viewport().mapToGlobal(pos))
        self._load_options(thread.id)

    def _forget_menu(self, menu: QMenu) -> None:
        if self.context_menu is menu:
            self.context_menu = None
            self.menu_options = None

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
        options = ThreadMenuOptions(thread_id)
        self.menu_options = options
        if self._queue is not None:
            self._add_queue_modes(menu, options, self._queue)
        if self._memory is not None:
            self._add_compaction(menu, options, self._memory)
            menu.addSeparator()
            for export_format, label in EXPORT_CHOICES.items():
                action = menu.addAction(label)
                action.triggered.connect(
                    lambda _checked=False, f=export_format: self.export_requested.emit(thread_id, f)
                )
                options.exports[export_format] = action
        self._show_options(options)
        return menu

    def _add_queue_modes(
        self, menu: QMenu, options: ThreadMenuOptions, queue: ThreadQueueModes
    ) -> None:
        modes = menu.addMenu("Queue mode while it works")
        modes.setToolTipsVisible(True)
        options.queue_modes = _exclusive_choices(
            modes,
            QUEUE_MODE_CHOICES,
            lambda mode: queue.set_default_mode(options.thread_id, mode),
        )

    def _add_compaction(
        self, menu: QMenu, options: ThreadMenuOptions, memory: ThreadCompaction
    ) -> None:
        compaction = menu.addMenu("Compaction")
        compaction.setToolTipsVisible(True)
        options.compaction = _exclusive_choices(
            compaction,
            COMPACTION_CHOICES,
            lambda mode: memory.set_compaction(options.thread_id, mode),
        )
        compaction.addSeparator()
        now = compaction.addAction("Compact now")
        now.triggered.connect(lambda: memory.compact_now(options.thread_id))
        options.compact_now = now

    def _load_options(self, thread_id: str) -> None:
        """Read the thread's current modes again; the open menu's checks follow the replies."""
        if self._queue is not None:
            self._queue.load_default_mode(thread_id)
        if self._memory is not None:
            self._memory.load_compaction(thread_id)

    def _on_options_changed(self, thread_id: str) -> None:
        options = self.menu_options
        if options is not None and options.thread_id == thread_id:
            self._show_options(options)

    def _show_options(self, options: ThreadMenuOptions) -> None:
        """Check the known modes; a mode not known (yet) shows no check."""
        thread_id = options.thread_id
        mode = self._queue.default_mode(thread_id) if self._queue is not None else None
        for key, action in options.queue_modes.items():
            action.setChecked(key == mode)
        compaction = self._memory.compaction_mode(thread_id) if self._memory is not None else None
        for key, action in options.compaction.items():
            action.setChecked(key == compaction)

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


def _exclusive_choices(
    menu: QMenu, choices: dict[K, tuple[str, str]], chosen: Callable[[K], object]
) -> dict[K, QAction]:
    """Checkable actions in `menu`, one per choice (label, tip), at most one checked; a
    click calls `chosen` with its key."""
    group = QActionGroup(menu)
    actions: dict[K, QAction] = {}
    for key, (label, tip) in choices.items():
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setToolTip(tip)
        group.addAction(action)
        action.triggered.connect(lambda _checked=False, k=key: chosen(k))
        actions[key] = action
    return actions
