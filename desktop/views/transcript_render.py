"""How transcript entries look: one `QTextDocument` per shown entry, painted by a delegate.

Finished agent answers are Markdown; the answer being streamed is a `StreamingDocument`: text is
inserted at its end, each finished Markdown block is rendered once when it ends, and only the
open block is plain text. Rows that were never painted report an estimated height (cheap), so
opening a long thread lays out hundreds of rows without building hundreds of documents.
Marks between messages are painted small: a memory chip as a pill around its one line, a
summary divider as a rule with its line (and the summary, when expanded) under it. A delegated
plan's report (an announcement) is a row of its own: "Result of a delegated plan" over a bold
"Plan <id> finished: <status>" and the report, in a panel edged in the colour of how it ended.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from desktop.models.stream_text import BlockSplitter
from desktop.models.transcript_entries import (
    AnnouncementEntry,
    MessageEntry,
    NoticeEntry,
    ToolCallEntry,
    TranscriptEntry,
)
from desktop.models.transcript_marks import (
    MARK_TYPES,
    ContextChipEntry,
    MarkEntry,
    MemoryChipEntry,
    SummaryDividerEntry,
    chip_text,
    context_chip_text,
    divider_text,
)
from desktop.views.find_marks import FindMarks
from desktop.views.text import monospace_font, pretty_json

ENTRY_ROLE = Qt.ItemDataRole.UserRole + 1

MARGIN = 8
PADDING = 8
HEADER_GAP = 4
CACHE_SIZE = 400

_TOOL_STATE_TEXT = {
    "pending": "running…",
    "awaiting_approval": "waiting for approval",
    "succeeded": "done",
    "failed": "failed",
}
_ENDED_COLOURS = {"completed": "#1a7f37", "failed": "#cf222e", "aborted": "#9a6700"}
ANNOUNCEMENT_MARK = "↩ "
_Index = QModelIndex | QPersistentModelIndex


def entry_text(entry: TranscriptEntry) -> str:
    """The one-line-per-entry text of an entry, as tests and copying see it."""
    if isinstance(entry, AnnouncementEntry):
        return ANNOUNCEMENT_MARK + announcement_text(entry)
    if isinstance(entry, MessageEntry):
        return entry.text + (" ▍" if entry.streaming else "")
    if isinstance(entry, ToolCallEntry):
        return tool_header(entry)
    if isinstance(entry, MemoryChipEntry):
        return "◆ " + chip_text(entry)
    if isinstance(entry, ContextChipEntry):
        return "◇ " + context_chip_text(entry, expanded=False)
    if isinstance(entry, SummaryDividerEntry):
        return divider_text(entry, expanded=False)
    return ("⚠ " if entry.kind == "failed" else "■ ") + entry.text


def announcement_text(entry: AnnouncementEntry) -> str:
    """Each plan's header line with its report under it (what the row's document shows)."""
    if not entry.plans:
        return entry.text
    return "\n\n".join(f"{plan.header}\n{plan.report}".rstrip() for plan in entry.plans)


def _build_announcement(doc: QTextDocument, entry: AnnouncementEntry) -> None:
    """Bold header lines, plain reports (a report is plain text: never read as Markdown)."""
    if not entry.plans:
        doc.setPlainText(entry.text)
        return
    cursor = QTextCursor(doc)
    bold, plain = QTextCharFormat(), QTextCharFormat()
    bold.setFontWeight(QFont.Weight.Bold)
    for i, plan in enumerate(entry.plans):
        if i:
            cursor.insertBlock(QTextBlockFormat(), plain)
        cursor.insertText(plan.header, bold)
        if plan.report:
            cursor.insertBlock(QTextBlockFormat(), plain)
            cursor.insertText(plan.report, plain)


def tool_header(entry: ToolCallEntry) -> str:
    state = _TOOL_STATE_TEXT.get(entry.state, entry.state)
    if entry.state == "pending" and entry.progress_message:
        state = entry.progress_message
    if entry.state == "pending" and entry.progress is not None and entry.total:
        state += f" ({int(100 * min(entry.progress / entry.total, 1.0))}%)"
    name = f"{entry.server} · {entry.tool}" if entry.server else entry.tool
    return f"⚙ {name} — {state}"


def tool_details(entry: ToolCallEntry) -> str:
    details = f"arguments:\n{pretty_json(entry.arguments)}"
    if entry.result is not None:
        details += f"\n\n{'error' if entry.state == 'failed' else 'result'}:\n{entry.result}"
    return details


class StreamingDocument:
    """The document of the answer being streamed: appended to, never re-set.

    Finished blocks are rendered one by one as Markdown; what they show equals a fresh render
    of the whole text (`QTextDocument.setMarkdown`), block formats and lists included: each
    block is parsed alone and inserted as a fragment that keeps its own formats (see
    `markdown_fragment`), and the open block (the tail) is a plain block of its own, so no
    block takes on the list or heading of the one before it.
    """

    def __init__(self, font: QFont) -> None:
        self.document = QTextDocument()
        self.document.setDefaultFont(font)
        self.document.setDocumentMargin(0)
        self._splitter = BlockSplitter()
        self._rendered_end = 0  # where the rendered blocks end (the tail's block starts after)
        self.fed = 0

    def append(self, text: str) -> None:
        """Add streamed text: plain at the end, finished blocks rendered as Markdown."""
        self.fed += len(text)
        blocks = self._splitter.feed(text)
        cursor = QTextCursor(self.document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not blocks:
            cursor.insertText(text)
            return
        self._render_blocks(cursor, blocks)
        cursor.insertText(self._splitter.tail)

    def finish(self) -> None:
        """The stream ended: render the open block too."""
        tail = self._splitter.finish()
        cursor = QTextCursor(self.document)
        self._render_blocks(cursor, [tail] if tail.strip() else [], last=True)

    def plain_text(self) -> str:
        return self.document.toPlainText()

    def _render_blocks(self, cursor: QTextCursor, blocks: list[str], *, last: bool = False) -> None:
        """Replace the plain tail (and the break before it) with `blocks` rendered; unless
        `last`, start a plain block for the next tail."""
        cursor.setPosition(self._rendered_end)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        for block in blocks:
            if self.document.isEmpty():
                self.document.setMarkdown(block)  # the first block: no break before it
            else:
                cursor.movePosition(QTextCursor.MoveOperation.End)
                cursor.insertFragment(markdown_fragment(block))
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self._rendered_end = cursor.position()
        if not last and not self.document.isEmpty():
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())


def markdown_fragment(markdown: str) -> QTextDocumentFragment:
    """`markdown` rendered, as a fragment to insert at the end of a non-empty block: it starts
    with a break, so its first block keeps its own format (a fragment's first block is merged
    into the block it is inserted in and takes that block's format: a heading or list item
    would come out as whatever came before it)."""
    scratch = QTextDocument()
    scratch.setMarkdown(markdown)
    first = scratch.begin()
    if first.length() > 1 or first.textList() is not None:
        cursor = QTextCursor(scratch)
        cursor.insertBlock(first.blockFormat(), first.charFormat())
        QTextCursor(scratch.begin()).setBlockFormat(QTextBlockFormat())
    # Else it starts with an empty block already (before a table, whose frame cannot lead).
    return QTextDocumentFragment(scratch)


class EntryDocuments:
    """Documents of the entries, cached (least recently painted dropped first), plus the live
    `StreamingDocument`s, and the heights rows were last laid out with."""

    def __init__(self, font: QFont) -> None:
        self.font = font
        self.bold = QFont(font)
        self.bold.setBold(True)
        self._docs: OrderedDict[int, QTextDocument] = OrderedDict()
        self.streams: dict[int, StreamingDocument] = {}
        self.expanded: set[str] = set()
        self._metrics = QFontMetrics(font)
        self._header_height = QFontMetrics(self.bold).lineSpacing() + HEADER_GAP

    def clear(self) -> None:
        self._docs.clear()
        self.streams.clear()

    def forget(self, entry: TranscriptEntry) -> None:
        self._docs.pop(id(entry), None)

    def has_stream(self, entry: TranscriptEntry) -> bool:
        return id(entry) in self.streams

    def stream_for(self, entry: MessageEntry) -> StreamingDocument:
        stream = self.streams.get(id(entry))
        if stream is None:
            stream = StreamingDocument(self.font)
            stream.append(entry.settle().text)
            self.streams[id(entry)] = stream
        return stream

    def end_stream(self, entry: MessageEntry) -> None:
        """The entry finished streaming: its streamed document becomes its document when it
        was fed the final text (rendered block by block), else the final text is rendered."""
        stream = self.streams.pop(id(entry), None)
        if stream is None:
            return
        stream.finish()
        if not entry.rewritten and stream.fed == len(entry.text):
            self._remember(entry, stream.document)

    def document(self, entry: TranscriptEntry, width: int) -> QTextDocument:
        if isinstance(entry, MessageEntry) and entry.streaming:
            doc = self.stream_for(entry).document
        else:
            doc = self._docs.get(id(entry))
            if doc is None:
                doc = self._build(entry)
                self._remember(entry, doc)
            else:
                self._docs.move_to_end(id(entry))
        if doc.textWidth() != width:
            doc.setTextWidth(width)
        return doc

    def _remember(self, entry: TranscriptEntry, doc: QTextDocument) -> None:
        self._docs[id(entry)] = doc
        while len(self._docs) > CACHE_SIZE:
            self._docs.popitem(last=False)

    def _build(self, entry: TranscriptEntry) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.font)
        if isinstance(entry, AnnouncementEntry):
            _build_announcement(doc, entry)
        elif isinstance(entry, MessageEntry):
            if entry.role == "assistant":
                doc.setMarkdown(entry.text)
            else:
                doc.setPlainText(entry.text)
        elif isinstance(entry, ToolCallEntry):
            if entry.call_id in self.expanded:
                doc.setDefaultFont(monospace_font())
            doc.setPlainText(self._plain(entry))
        else:
            doc.setPlainText(self._plain(entry))
        return doc

    def _plain(self, entry: TranscriptEntry) -> str:
        """The text of an entry that is not a message, as its document shows it."""
        if isinstance(entry, ToolCallEntry) and entry.call_id in self.expanded:
            return tool_header(entry) + "\n" + tool_details(entry)
        if isinstance(entry, SummaryDividerEntry):
            return divider_text(entry, entry.key in self.expanded)
        if isinstance(entry, ContextChipEntry):
            return "◇ " + context_chip_text(entry, entry.key in self.expanded)
        return entry_text(entry)

    def estimate(self, entry: TranscriptEntry, width: int) -> int:
        """A height without building the document: wrapped lines times the line height."""
        text = entry.text if isinstance(entry, MessageEntry) else self._plain(entry)
        if isinstance(entry, MessageEntry) and entry.chunks:
            text = entry.settle().text
        per_line = max(1, width // max(1, self._metrics.averageCharWidth()))
        lines = sum(max(1, math.ceil(len(p) / per_line)) for p in text.split("\n"))
        return lines * self._metrics.lineSpacing()

    @property
    def header_height(self) -> int:
        """The speaker line above a message."""
        return self._header_height


def _header(entry: MessageEntry) -> str:
    if isinstance(entry, AnnouncementEntry):
        return (
            "Results of delegated plans" if len(entry.plans) > 1 else "Result of a delegated plan"
        )
    return "You" if entry.role == "user" else "Agent"


class TranscriptDelegate(QStyledItemDelegate):
    """Paints an entry: a panel with the speaker and the document; tool calls and notices as
    one line; in messages, Find's `marks`. Heights: measured for rows that were painted,
    estimated for the others."""

    def __init__(self, docs: EntryDocuments, viewport: QWidget) -> None:
        super().__init__(viewport)
        self.docs = docs
        self.marks = FindMarks()
        self._viewport = viewport
        self._measured: dict[int, tuple[int, int]] = {}  # id(entry) -> (width, body height)
        self.visible = QRect()  # the viewport area being painted (set by the view)

    def forget(self, entry: TranscriptEntry) -> None:
        self._measured.pop(id(entry), None)

    def clear(self) -> None:
        self._measured.clear()

    def stream_height(self, entry: MessageEntry) -> int:
        return math.ceil(self.docs.document(entry, self.body_width()).size().height())

    def body_top(self, entry: TranscriptEntry) -> int:
        """How far below its row's top an entry's document is painted."""
        return PADDING + (self.docs.header_height if isinstance(entry, MessageEntry) else 0)

    def body_width(self, _option: QStyleOptionViewItem | None = None) -> int:
        """One width for measuring and painting (the viewport's), so documents are laid out
        once per resize, never per call."""
        return max(40, self._viewport.width() - 2 * (MARGIN + PADDING))

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        entry: TranscriptEntry | None = index.data(ENTRY_ROLE)
        width = self.body_width(option)
        if entry is None:
            return QSize(width, 0)
        if isinstance(entry, MessageEntry) and entry.streaming:
            body = self.stream_height(entry)
        else:
            measured = self._measured.get(id(entry))
            if measured is None or measured[0] != width:
                measured = (width, self.docs.estimate(entry, width))
                self._measured[id(entry)] = measured
            body = measured[1]
        header = self.docs.header_height if isinstance(entry, MessageEntry) else 0
        return QSize(width, body + header + 2 * PADDING + MARGIN)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        entry: TranscriptEntry | None = index.data(ENTRY_ROLE)
        if entry is None:
            return
        rect = option.rect  # type: ignore[attr-defined]
        palette: QPalette = option.palette  # type: ignore[attr-defined]
        width = self.body_width(option)
        doc = self.docs.document(entry, width)
        body = math.ceil(doc.size().height())
        painter.save()
        header = self.docs.header_height if isinstance(entry, MessageEntry) else 0
        full = QRect(rect.left(), rect.top(), rect.width(), body + header + 2 * PADDING + MARGIN)
        panel = QRectF(full.adjusted(MARGIN, MARGIN // 2, -MARGIN, -MARGIN // 2))
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        if isinstance(entry, MARK_TYPES):
            expanded = isinstance(entry, ContextChipEntry) and entry.key in self.docs.expanded
            _paint_mark(painter, entry, panel, doc, palette, selected=selected, expanded=expanded)
        elif isinstance(entry, AnnouncementEntry):
            _paint_announcement(painter, entry, panel, palette, selected=selected)
        elif isinstance(entry, MessageEntry):
            colour = palette.color(QPalette.ColorRole.AlternateBase)
            painter.setPen(palette.color(QPalette.ColorRole.Mid))
            painter.setBrush(palette.color(QPalette.ColorRole.Highlight) if selected else colour)
            painter.drawRoundedRect(panel, 6, 6)
        elif selected:
            painter.fillRect(panel, palette.color(QPalette.ColorRole.Highlight))
        x = rect.left() + MARGIN + PADDING
        y = rect.top() + PADDING
        if isinstance(entry, MessageEntry):
            painter.setFont(self.docs.bold)
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            painter.drawText(x, y + QFontMetrics(self.docs.bold).ascent(), _header(entry))
            y += self.docs.header_height
        painter.translate(x, y)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, _text_colour(entry, palette))
        if self.marks.active and isinstance(entry, MessageEntry):
            context.selections = self.marks.selections(doc, entry.message_id)
        # Only the visible part of a long answer is drawn. Qt caps `rect`'s height at 32767 px,
        # so the clip is taken from the viewport below the row's top, not from `rect`.
        visible = self.visible if self.visible.isValid() else QRect(rect)
        top = max(visible.top(), rect.top())
        if visible.bottom() >= top:
            context.clip = QRectF(
                visible.left() - x, top - y, visible.width(), visible.bottom() - top + 1
            )
            doc.documentLayout().draw(painter, context)
        painter.restore()
        self._note_height(entry, width, body, index)

    def _note_height(self, entry: TranscriptEntry, width: int, body: int, index: _Index) -> None:
        """A painted row's exact height replaces its estimate (and the rows are laid out anew
        when they differ)."""
        if isinstance(entry, MessageEntry) and entry.streaming:
            return
        if self._measured.get(id(entry)) != (width, body):
            self._measured[id(entry)] = (width, body)
            self.sizeHintChanged.emit(QModelIndex(index))  # type: ignore[arg-type]


def _paint_mark(
    painter: QPainter,
    entry: MarkEntry,
    panel: QRectF,
    doc: QTextDocument,
    palette: QPalette,
    *,
    selected: bool,
    expanded: bool = False,
) -> None:
    """A chip: a pill as wide as its text (an expanded context chip: a panel around its parts).
    A divider: a rule along the top of its row."""
    if isinstance(entry, ContextChipEntry) and expanded:
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        role = QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Button
        painter.setBrush(palette.color(role))
        painter.drawRoundedRect(panel, 6, 6)
        return
    if isinstance(entry, MemoryChipEntry | ContextChipEntry):
        pill = QRectF(panel)
        pill.setWidth(min(panel.width(), doc.idealWidth() + 2 * PADDING))
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        role = QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Button
        painter.setBrush(palette.color(role))
        painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
        return
    if selected:
        painter.fillRect(panel, palette.color(QPalette.ColorRole.Highlight))
    painter.setPen(palette.color(QPalette.ColorRole.Mid))
    painter.drawLine(panel.topLeft(), panel.topRight())


def _paint_announcement(
    painter: QPainter,
    entry: AnnouncementEntry,
    panel: QRectF,
    palette: QPalette,
    *,
    selected: bool,
) -> None:
    """A panel unlike a message's: the base colour, edged in the colour of how the plan ended
    (the first plan's, when one message reports several), with a bar down its left side."""
    status = entry.plans[0].status if entry.plans else ""
    edge = QColor(_ENDED_COLOURS.get(status, "#0969da"))
    role = QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Base
    painter.setPen(edge)
    painter.setBrush(palette.color(role))
    painter.drawRoundedRect(panel, 6, 6)
    bar = QRectF(panel.left(), panel.top(), 4, panel.height())
    painter.fillRect(bar, edge)


def _text_colour(entry: TranscriptEntry, palette: QPalette) -> QColor:
    if isinstance(entry, MemoryChipEntry) and (entry.action == "failed" or entry.error):
        return QColor("#cf222e")
    if isinstance(entry, SummaryDividerEntry):
        return palette.color(QPalette.ColorRole.PlaceholderText)
    if isinstance(entry, NoticeEntry):
        return (
            QColor("#cf222e")
            if entry.kind == "failed"
            else palette.color(QPalette.ColorRole.PlaceholderText)
        )
    return palette.color(QPalette.ColorRole.Text)


def entry_of(index: Any) -> TranscriptEntry | None:
    value = index.data(ENTRY_ROLE)
    kinds = (MessageEntry, ToolCallEntry, NoticeEntry, *MARK_TYPES)
    return value if isinstance(value, kinds) else None
