"""`ThreadListModel`: a thin Qt tree model over `ThreadsState` (editable titles).

Channels are folders at the top, sorted by name, each holding its threads newest first;
threads filed under no channel follow them at the top level, newest first.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont

from desktop.models.threads import ThreadsState, channel_sort_key
from sidecar.protocol import ThreadInfo

THREAD_ID_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
CHANNEL_ROLE = Qt.ItemDataRole.UserRole + 3
"""A thread's channel, or a folder's name (None: a thread filed under no channel)."""

_STATUS_MARKS = {
    "idle": "",
    "running": "  ⟳",
    "interrupted": "  ●",
    "failed": "  ⚠",
    "cancelled": "  ■",
}
# A collapsed folder still shows that a thread inside runs or waits for the author.
_FOLDER_MARKS = ("running", "interrupted")

_Index = QModelIndex | QPersistentModelIndex
_TOP = 0
"""`internalId` of top-level rows; a thread in folder k has k + 1."""


class ThreadListModel(QAbstractItemModel):
    """Folders and threads. Editing a title does not change it here: it emits
    `rename_requested(thread_id, title)`, and the list changes when the sidecar confirms."""

    rename_requested = Signal(str, str)

    def __init__(self, threads: ThreadsState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._threads = threads
        self._folders: list[str] = []
        self._members: list[list[ThreadInfo]] = []
        self._loose: list[ThreadInfo] = []
        # thread id → (folder row, or -1 at the top level; row under that parent)
        self._place: dict[str, tuple[int, int]] = {}
        self._lay_out()
        threads.reset.connect(self._on_threads_reset)
        threads.updated.connect(self._on_threads_updated)

    def channels(self) -> list[str]:
        """The folders' names, in the order shown."""
        return list(self._folders)

    def thread_ids(self) -> list[str]:
        """Every thread, in the order the list shows them (folders first, each one's threads
        under it, open or not)."""
        return [t.id for members in self._members for t in members] + [t.id for t in self._loose]

    def thread_of(self, index: _Index) -> ThreadInfo | None:
        """The thread a row shows (None: a folder, or no row)."""
        if not index.isValid():
            return None
        row, folder = index.row(), index.internalId() - 1
        if folder >= 0:
            members = self._members[folder] if folder < len(self._members) else []
            return members[row] if 0 <= row < len(members) else None
        loose_row = row - len(self._folders)
        return self._loose[loose_row] if 0 <= loose_row < len(self._loose) else None

    def channel_of(self, index: _Index) -> str | None:
        """The folder's name if the row is a folder, else None."""
        if not index.isValid() or index.internalId() != _TOP:
            return None
        return self._folders[index.row()] if index.row() < len(self._folders) else None

    def index_of(self, thread_id: str | None) -> QModelIndex | None:
        place = self._place.get(thread_id) if thread_id is not None else None
        if place is None:
            return None
        folder, row = place
        if folder < 0:
            return self.index(row, 0)
        return self.index(row, 0, self.index(folder, 0))

    def folder_index(self, channel: str) -> QModelIndex | None:
        try:
            return self.index(self._folders.index(channel), 0)
        except ValueError:
            return None

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column != 0 or row < 0 or row >= self.rowCount(parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _TOP)
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, child: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008  # pyright: ignore[reportIncompatibleMethodOverride]
        if not child.isValid() or child.internalId() == _TOP:
            return QModelIndex()
        return self.createIndex(child.internalId() - 1, 0, _TOP)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self._folders) + len(self._loose)
        if parent.internalId() == _TOP and parent.row() < len(self._folders):
            return len(self._members[parent.row()])
        return 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        del parent
        return 1

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        thread = self.thread_of(index)
        if thread is not None:
            return _thread_data(thread, role)
        channel = self.channel_of(index)
        if channel is not None:
            return self._folder_data(index.row(), channel, role)
        return None

    def _folder_data(self, row: int, channel: str, role: int) -> Any:
        members = self._members[row]
        if role == Qt.ItemDataRole.DisplayRole:
            statuses = {t.status for t in members}
            mark = next((m for m in _FOLDER_MARKS if m in statuses), "idle")
            return f"{channel}  ({len(members)})" + _STATUS_MARKS[mark]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Channel “{channel}”: {len(members)} threads"
        if role in (Qt.ItemDataRole.EditRole, CHANNEL_ROLE):
            return channel
        if role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if self.thread_of(index) is not None else base

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        thread = self.thread_of(index)
        title = str(value).strip() if value is not None else ""
        if thread is None or role != Qt.ItemDataRole.EditRole or not title:
            return False
        if title != thread.title:
            self.rename_requested.emit(thread.id, title)
        return True

    def _lay_out(self) -> None:
        """Group the threads (newest first) under their channels' folders."""
        by_channel: dict[str, list[ThreadInfo]] = {}
        loose: list[ThreadInfo] = []
        for row in range(len(self._threads)):
            thread = self._threads.at(row)
            if thread.channel:
                by_channel.setdefault(thread.channel, []).append(thread)
            else:
                loose.append(thread)
        self._folders = sorted(by_channel, key=channel_sort_key)
        self._members = [by_channel[name] for name in self._folders]
        self._loose = loose
        self._place = {}
        for folder, members in enumerate(self._members):
            self._place.update((t.id, (folder, row)) for row, t in enumerate(members))
        self._place.update((t.id, (-1, len(self._folders) + row)) for row, t in enumerate(loose))

    def _on_threads_reset(self) -> None:
        self.beginResetModel()
        self._lay_out()
        self.endResetModel()

    def _on_threads_updated(self, row: int) -> None:
        thread = self._threads.at(row)
        place = self._place.get(thread.id)
        index = self.index_of(thread.id)
        shown = self.thread_of(index) if index is not None else None
        if place is None or index is None or shown is None or shown.channel != thread.channel:
            self._on_threads_reset()  # moved to another folder: the tree's shape changed
            return
        folder, member_row = place
        if folder < 0:
            self._loose[member_row - len(self._folders)] = thread
        else:
            self._members[folder][member_row] = thread
            folder_index = self.index(folder, 0)
            self.dataChanged.emit(folder_index, folder_index)
        self.dataChanged.emit(index, index)


def _thread_data(thread: ThreadInfo, role: int) -> Any:
    if role == Qt.ItemDataRole.DisplayRole:
        return thread.title + _STATUS_MARKS.get(thread.status, "")
    if role == Qt.ItemDataRole.EditRole:
        return thread.title
    if role == Qt.ItemDataRole.ToolTipRole:
        return f"{thread.title} ({thread.status})"
    if role == THREAD_ID_ROLE:
        return thread.id
    if role == STATUS_ROLE:
        return thread.status
    if role == CHANNEL_ROLE:
        return thread.channel
    return None
