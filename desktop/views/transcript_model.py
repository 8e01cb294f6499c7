"""`TranscriptListModel`: the Qt list model over a `Transcript` (the view's rows)."""

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

from desktop.models.transcript import Transcript
from desktop.models.transcript_entries import AnnouncementEntry
from desktop.models.transcript_marks import ContextChipEntry, MemoryChipEntry, chip_text
from desktop.views.transcript_render import ENTRY_ROLE, entry_text

_Index = QModelIndex | QPersistentModelIndex


class TranscriptListModel(QAbstractListModel):
    """A thin Qt list model over `Transcript`; streamed text is passed on, not re-read.

    Signals: `text_appended(row, text)`, `about_to_shift(first, last, inserted)` (before rows
    come in at the start or go at either end: the view keeps its place).
    """

    text_appended = Signal(int, str)
    about_to_shift = Signal(int, int, bool)

    def __init__(self, transcript: Transcript, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.transcript = transcript
        transcript.reset.connect(self._on_transcript_reset)
        transcript.inserted.connect(self._on_transcript_inserted)
        transcript.updated.connect(self._on_transcript_updated)
        transcript.appended.connect(self._on_transcript_appended)
        transcript.prepended.connect(self._on_transcript_prepended)
        transcript.removed.connect(self._on_transcript_removed)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.transcript)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.transcript):
            return None
        if role == ENTRY_ROLE:
            return self.transcript.peek(index.row())
        if role == Qt.ItemDataRole.DisplayRole:
            return entry_text(self.transcript.entry(index.row()))
        if role == Qt.ItemDataRole.ToolTipRole:
            entry = self.transcript.peek(index.row())
            if isinstance(entry, MemoryChipEntry):
                memory = entry.memory
                return chip_text(entry) if memory is None else memory.text
            if isinstance(entry, ContextChipEntry):
                return "What the agent saw this turn: click to show every part"
            if isinstance(entry, AnnouncementEntry):
                return "Delivered into the thread by itself when the plan ended (not typed by you)"
        return None

    def _on_transcript_reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def _on_transcript_inserted(self, row: int) -> None:
        if row < len(self.transcript) - 1:  # a mark put in between rows
            self.about_to_shift.emit(row, row, True)
        self.beginInsertRows(QModelIndex(), row, row)
        self.endInsertRows()

    def _on_transcript_prepended(self, count: int) -> None:
        self.about_to_shift.emit(0, count - 1, True)
        self.beginInsertRows(QModelIndex(), 0, count - 1)
        self.endInsertRows()

    def _on_transcript_removed(self, first: int, last: int) -> None:
        self.about_to_shift.emit(first, last, False)
        self.beginRemoveRows(QModelIndex(), first, last)
        self.endRemoveRows()

    def _on_transcript_updated(self, row: int) -> None:
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def _on_transcript_appended(self, row: int, text: str) -> None:
        self.text_appended.emit(row, text)
