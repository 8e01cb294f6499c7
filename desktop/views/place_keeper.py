"""Keeping the author's place in the transcript while rows come in above it or go at one end.

When a page of older messages comes in, or rows are dropped, the entry at the top of the view
must stay where it was on screen. The transcript has changed before the view's layout has, so
the entry is found by the old row plus the shift, and held (an *anchor*: the entry and its top
in the viewport) until its rows are laid out: applied at once, on every range change, and
released a few frames later. Each timer acts on its own anchor only: on a busy GUI thread an
older page's late release must not drop the next page's anchor.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QListView

from desktop.models.transcript import Transcript

HOLD_MS = 64
"""How long an anchor is held after its rows came in (about four frames)."""

Anchor = tuple[object, int]


class PlaceKeeper(QObject):
    """Holds the entry at the top of `list_view` in place while `transcript` shifts."""

    def __init__(self, list_view: QListView, transcript: Transcript) -> None:
        super().__init__(list_view)
        self._list_view = list_view
        self._transcript = transcript
        self._anchor: Anchor | None = None

    @property
    def holding(self) -> bool:
        """Whether rows that just came in above are being laid out with the place held."""
        return self._anchor is not None

    def drop(self) -> None:
        """Let go of the place (the transcript was replaced)."""
        self._anchor = None

    def shifting(self, first: int, last: int, inserted: bool, *, following_end: bool) -> None:
        """Rows `first..last` came in (`inserted`) or went: hold the place if rows above the
        view's top moved."""
        if first > 0 and (not inserted or following_end):
            return  # rows went at the end, or the view follows the end anyway
        view = self._list_view
        top = view.indexAt(view.viewport().rect().topLeft())
        if not top.isValid():
            return
        row = top.row()
        if inserted and first > row:
            return  # a row came in below the top of the view: nothing above it moved
        row += last - first + 1 if inserted else first - last - 1
        if not 0 <= row < len(self._transcript):
            return
        anchor = (self._transcript.peek(row), view.visualRect(top).top())
        self._anchor = anchor
        QTimer.singleShot(0, self, lambda: self._apply(anchor))  # the range may not change
        QTimer.singleShot(HOLD_MS, self, lambda: self._release(anchor))

    def restore(self) -> bool:
        """Put the held entry back where it was (the range changed); False when none is held."""
        if self._anchor is None:
            return False
        entry, top = self._anchor
        row = self._transcript.row_of_entry(entry)
        if row is not None:
            view = self._list_view
            now = view.visualRect(view.model().index(row, 0)).top()
            bar = view.verticalScrollBar()
            bar.setValue(bar.value() + now - top)
        return True

    def _apply(self, anchor: Anchor) -> None:
        if self._anchor is anchor:
            self._list_view.executeDelayedItemsLayout()
            self.restore()

    def _release(self, anchor: Anchor) -> None:
        if self._anchor is anchor:
            self._anchor = None
