"""`ThreadListModel`: a thin Qt list model over `ThreadsState` (editable titles)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from desktop.models.threads import ThreadsState
from sidecar.protocol import ThreadInfo

THREAD_ID_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2

_STATUS_MARKS = {
    "idle": "",
    "running": "  ⟳",
    "interrupted": "  ●",
    "failed": "  ⚠",
    "cancelled": "  ■",
}

_Index = QModelIndex | QPersistentModelIndex


class ThreadListModel(QAbstractListModel):
    """Rows are threads, newest first. Editing a title does not change it here: it emits
    `rename_requested(thread_id, title)`, and the list changes when the sidecar confirms."""

    rename_requested = Signal(str, str)

    def __init__(self, threads: ThreadsState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._threads = threads
        threads.reset.connect(self._on_threads_reset)
        threads.updated.connect(self._on_threads_updated)

    def thread_at(self, row: int) -> ThreadInfo | None:
        threads = self._threads.threads
        return threads[row] if 0 <= row < len(threads) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._threads)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        thread = self.thread_at(index.row()) if index.isValid() else None
        if thread is None:
            return None
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
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.isValid() else base

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        thread = self.thread_at(index.row()) if index.isValid() else None
        title = str(value).strip() if value is not None else ""
        if thread is None or role != Qt.ItemDataRole.EditRole or not title:
            return False
        if title != thread.title:
            self.rename_requested.emit(thread.id, title)
        return True

    def row_of(self, thread_id: str | None) -> int | None:
        return None if thread_id is None else self._threads.row_of(thread_id)

    def _on_threads_reset(self) -> None:
        # ThreadsState has already changed; a reset makes views re-read everything.
        self.beginResetModel()
        self.endResetModel()

    def _on_threads_updated(self, row: int) -> None:
        index = self.index(row, 0)
        self.dataChanged.emit(index, index)
