"""`FindMarks`: what Find marks in the transcript's documents.

Every match of the query in a message is marked, the current one in a colour of its own, as
selections the delegate hands to the document layout when it paints a row (the text itself is
never changed). The matches are what `sidecar.protocol.find_pattern` describes, which is also
what the sidecar counted (`SearchHit.matches`), found here in the rendered document; they are
kept per document until it changes, so repainting a row does not search it again.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QRectF, QRegularExpression
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

from sidecar.protocol import find_pattern

MATCH_COLOUR = "#fff176"
CURRENT_COLOUR = "#ff9632"
_CACHED_DOCUMENTS = 64

Span = tuple[int, int]


def _mark_format(colour: str) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(QColor(colour))
    fmt.setForeground(QColor("#000000"))  # readable on the mark in dark mode too
    return fmt


class FindMarks:
    """The query's matches in documents and which one is current (`message_id`, and which of
    that message's matches, in reading order)."""

    def __init__(self) -> None:
        self.query = ""
        self.current: tuple[str, int] | None = None
        self._pattern: QRegularExpression | None = None
        self._spans: OrderedDict[int, tuple[QTextDocument, int, list[Span]]] = OrderedDict()
        self._match = _mark_format(MATCH_COLOUR)
        self._current = _mark_format(CURRENT_COLOUR)

    @property
    def active(self) -> bool:
        return self._pattern is not None

    def set_query(self, query: str) -> None:
        """Mark the matches of `query` (an empty query, or one without words, marks none)."""
        pattern = find_pattern(query)
        self.query = query if pattern is not None else ""
        self.current = None
        self._spans.clear()
        self._pattern = (
            None
            if pattern is None
            else QRegularExpression(
                pattern, QRegularExpression.PatternOption.UseUnicodePropertiesOption
            )
        )

    def clear(self) -> None:
        self.set_query("")

    def set_current(self, message_id: str, occurrence: int) -> None:
        self.current = (message_id, occurrence)

    def spans(self, doc: QTextDocument) -> list[Span]:
        """Where the matches are in `doc`, in reading order."""
        if self._pattern is None:
            return []
        key = id(doc)
        cached = self._spans.get(key)
        if cached is not None and cached[0] is doc and cached[1] == doc.revision():
            self._spans.move_to_end(key)
            return cached[2]
        found: list[Span] = []
        cursor = doc.find(self._pattern, 0)
        while not cursor.isNull() and cursor.hasSelection():
            found.append((cursor.selectionStart(), cursor.selectionEnd()))
            cursor = doc.find(self._pattern, cursor)
        self._spans[key] = (doc, doc.revision(), found)
        while len(self._spans) > _CACHED_DOCUMENTS:
            self._spans.popitem(last=False)
        return found

    def current_in(self, doc: QTextDocument, message_id: str | None) -> int | None:
        """Which of `doc`'s matches is the current one (None: none of them). The sidecar counts
        in the stored text; where the rendered text has fewer, the last one stands in."""
        if self.current is None or message_id is None or self.current[0] != message_id:
            return None
        spans = self.spans(doc)
        return min(self.current[1], len(spans) - 1) if spans else None

    def selections(
        self, doc: QTextDocument, message_id: str | None
    ) -> list[QAbstractTextDocumentLayout.Selection]:
        """The marks to paint over `doc`: every match, the current one last (on top)."""
        spans = self.spans(doc)
        if not spans:
            return []
        current = self.current_in(doc, message_id)
        marks = [
            self._selection(doc, span, self._match) for n, span in enumerate(spans) if n != current
        ]
        if current is not None:
            marks.append(self._selection(doc, spans[current], self._current))
        return marks

    def marked(self, doc: QTextDocument, message_id: str | None) -> list[tuple[str, bool]]:
        """The text of each match in `doc`, in reading order, and whether it is the current
        one."""
        current = self.current_in(doc, message_id)
        return [
            (self._span_cursor(doc, span).selectedText(), n == current)
            for n, span in enumerate(self.spans(doc))
        ]

    def box(self, doc: QTextDocument, occurrence: int) -> QRectF | None:
        """The line of `doc` that holds its match number `occurrence` (the last one when it
        has fewer), in the document's coordinates."""
        spans = self.spans(doc)
        if not spans:
            return None
        start = spans[min(occurrence, len(spans) - 1)][0]
        block = doc.findBlock(start)
        layout = block.layout()
        block_box = doc.documentLayout().blockBoundingRect(block)
        if layout is None or layout.lineCount() == 0:
            return block_box
        line = layout.lineForTextPosition(start - block.position())
        if not line.isValid():
            return block_box
        rect = line.rect()
        return rect.translated(block_box.left(), block_box.top())

    @staticmethod
    def _span_cursor(doc: QTextDocument, span: Span) -> QTextCursor:
        cursor = QTextCursor(doc)
        cursor.setPosition(span[0])
        cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _selection(
        self, doc: QTextDocument, span: Span, fmt: QTextCharFormat
    ) -> QAbstractTextDocumentLayout.Selection:
        selection = QAbstractTextDocumentLayout.Selection()
        selection.cursor = self._span_cursor(doc, span)
        selection.format = fmt
        return selection
