"""`TranscriptView`: the selected thread as a model/view list, with the find bar above it.

Rows are `Transcript` entries painted by `TranscriptDelegate` (only the visible ones are drawn,
so a thread of any length opens as fast as its first page). Streamed text is coalesced per frame
(`FRAME_MS`) and appended to the answer's document. The list follows the end while the author
has not scrolled up; scrolling near the top asks for the next older page, near the bottom of a
detached stretch for the next newer one; `follow_end` (the author sent a message) goes back to
the end and follows it again. Ctrl+F (the window's Find action) opens the find bar: every match
of the query is marked, the current one in a colour of its own and scrolled into view (its
message's page loaded first when it is not in the list).

With a memory controller attached (`attach_memory`), a memory chip opens its menu when clicked
(Edit…, Move to tier ▸, Forget) and the thread's summaries are asked for when it is opened and
after a compaction, each becoming a divider that shows its summary when clicked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    Qt,
    QTimer,
)
from PySide6.QtGui import QKeySequence, QPaintEvent, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QListView, QVBoxLayout, QWidget

from desktop.controllers import PendingRequest
from desktop.models.find import FindMatch, FindResults
from desktop.models.stream_text import AppendBuffer
from desktop.models.transcript import Transcript
from desktop.models.transcript_entries import MessageEntry, ToolCallEntry
from desktop.models.transcript_marks import (
    ContextChipEntry,
    MemoryChipEntry,
    SummaryDividerEntry,
)
from desktop.views.find_bar import FindBarWidget
from desktop.views.memory_chip_menu import ChipActions, ChipMemory, MemoryChipMenu
from desktop.views.place_keeper import PlaceKeeper
from desktop.views.transcript_model import TranscriptListModel
from desktop.views.transcript_render import (
    MARGIN,
    PADDING,
    EntryDocuments,
    TranscriptDelegate,
    entry_text,
    tool_details,
)
from sidecar.protocol import ErrorObject, SummaryInfo, ThreadSearchResult

logger = logging.getLogger(__name__)

FRAME_MS = 16
PIN_SLACK_PX = 8
LOAD_MARGIN_PX = 400

_Index = QModelIndex | QPersistentModelIndex


class TranscriptHistory(Protocol):
    """What the view asks of the controller (`SessionController` provides it)."""

    def load_older(self) -> PendingRequest | None: ...
    def load_newer(self) -> PendingRequest | None: ...
    def jump_to_start(self) -> PendingRequest | None: ...
    def jump_to_end(self) -> PendingRequest | None: ...
    def search_thread(self, query: str) -> PendingRequest | None: ...
    def reveal_message(self, message_id: str, seq: int) -> PendingRequest | None: ...


class TranscriptMemory(ChipMemory, Protocol):
    """What the view asks of the memory controller (`MemoryController` provides it)."""

    def load_summaries(
        self, thread_id: str, on_placed: Callable[[SummaryInfo, str], None]
    ) -> PendingRequest: ...


class TranscriptListView(QListView):
    """The list itself: per-pixel scrolling, follows the end unless the author scrolled up."""

    def __init__(self, model: TranscriptListModel, docs: EntryDocuments) -> None:
        super().__init__()
        self.delegate = TranscriptDelegate(docs, self.viewport())
        self.setItemDelegate(self.delegate)
        self.setModel(model)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setUniformItemSizes(False)
        self.setWordWrap(True)
        self.verticalScrollBar().setSingleStep(24)

    def paintEvent(self, e: QPaintEvent) -> None:
        self.delegate.visible = QRect(e.rect())
        super().paintEvent(e)


class TranscriptView(QWidget):
    """The transcript of the selected thread and its find bar.

    Public for tests: `list_view`, `find_bar`, `plain_text()`, `shown_text(row)`,
    `tool_details(call_id)`, `toggle_tool(row)`, `is_pinned`.
    """

    def __init__(
        self,
        transcript: Transcript,
        history: TranscriptHistory | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._transcript = transcript
        self._history = history
        self.docs = EntryDocuments(self.font())
        self.model = TranscriptListModel(transcript, self)
        self.list_view = TranscriptListView(self.model, self.docs)
        self.find_bar = FindBarWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.find_bar)
        layout.addWidget(self.list_view, 1)
        self._pending = AppendBuffer()
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self.flush)
        self._pinned = True
        self._place = PlaceKeeper(self.list_view, transcript)
        # A message shown (a Find match) is scrolled to again once its rows are laid out,
        # unless the author went elsewhere meanwhile.
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(0)
        self._settle.timeout.connect(self._on_settle_timeout)
        self._settle_target: tuple[str, int | None] | None = None
        self._loading: PendingRequest | None = None
        self._revealing: str | None = None
        self._stream_heights: dict[int, int] = {}
        self._memory: TranscriptMemory | None = None
        self._chip_actions: ChipActions | None = None
        self.chip_menu: MemoryChipMenu | None = None
        self._connect()

    def attach_memory(self, memory: TranscriptMemory) -> None:
        """Let memory chips act on their memories and summaries show as dividers."""
        self._memory = memory
        self._chip_actions = ChipActions(memory, self._transcript, self)
        self._transcript.summaries_stale.connect(self._on_transcript_summaries_stale)
        self._load_summaries()

    @property
    def chip_actions(self) -> ChipActions | None:
        return self._chip_actions

    def _connect(self) -> None:
        bar = self.list_view.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)
        self.model.text_appended.connect(self._on_model_text_appended)
        self.model.modelReset.connect(self._on_model_reset)
        self.model.about_to_shift.connect(self._on_model_about_to_shift)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.model.dataChanged.connect(self._on_model_data_changed)
        self.list_view.clicked.connect(self._on_list_view_clicked)
        self.find_bar.search_requested.connect(self._on_find_bar_search_requested)
        self.find_bar.results_shown.connect(self._on_find_bar_results_shown)
        self.find_bar.match_activated.connect(self._on_find_bar_match_activated)
        self.find_bar.closed.connect(self._on_find_bar_closed)
        for keys, slot in (
            (QKeySequence.StandardKey.MoveToStartOfDocument, self.go_to_start),
            (QKeySequence.StandardKey.MoveToEndOfDocument, self.go_to_end),
            (QKeySequence.StandardKey.FindNext, self.find_bar.next_hit),
            (QKeySequence.StandardKey.FindPrevious, self.find_bar.previous_hit),
        ):
            shortcut = QShortcut(keys, self.list_view, context=Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)

    @property
    def is_pinned(self) -> bool:
        """True while the view follows the end."""
        return self._pinned

    def open_find_bar(self) -> None:
        """Ctrl+F: show the find bar (connected to the window's `find_requested`)."""
        self.find_bar.open_bar()

    def follow_end(self) -> None:
        """Go to the end and follow it from now on (the author sent a message: it and its
        answer come into view, wherever the author had scrolled or Find had gone)."""
        self._settle.stop()
        self._pinned = True
        self._scroll_to_end()
        QTimer.singleShot(0, self, self._scroll_to_end_if_pinned)  # after the new rows are laid out

    def plain_text(self) -> str:
        """Everything in the transcript, one entry per line (for tests and copying)."""
        return "\n".join(entry_text(entry) for entry in self._transcript.entries)

    def shown_text(self, row: int) -> str:
        """The text of a row's document as painted (rendered Markdown as plain text)."""
        entry = self._transcript.peek(row)
        width = self.list_view.delegate.body_width()
        return self.docs.document(entry, width).toPlainText()

    def tool_details(self, call_id: str) -> str:
        for entry in self._transcript.entries:
            if isinstance(entry, ToolCallEntry) and entry.call_id == call_id:
                return tool_details(entry)
        return ""

    def toggle_tool(self, row: int) -> None:
        """Expand or fold a tool call's arguments and result, a divider's summary, or a context
        chip's parts (what the agent saw that turn)."""
        entry = self._transcript.peek(row)
        if isinstance(entry, ToolCallEntry):
            key = entry.call_id
        elif isinstance(entry, SummaryDividerEntry | ContextChipEntry):
            key = entry.key
        else:
            return
        self.docs.expanded.symmetric_difference_update({key})
        self._invalidate(row)

    def is_expanded(self, row: int) -> bool:
        entry = self._transcript.peek(row)
        if isinstance(entry, SummaryDividerEntry | ContextChipEntry):
            return entry.key in self.docs.expanded
        return isinstance(entry, ToolCallEntry) and entry.call_id in self.docs.expanded

    def open_chip_menu(self, row: int) -> MemoryChipMenu | None:
        """Show a memory chip's menu under it (what clicking the chip does)."""
        entry = self._transcript.peek(row)
        if not isinstance(entry, MemoryChipEntry) or self._chip_actions is None:
            return None
        if self.chip_menu is not None:
            self.chip_menu.close()
            self.chip_menu.deleteLater()
        menu = MemoryChipMenu(entry, self)
        self._chip_actions.bind(menu, entry)
        self.chip_menu = menu
        rect = self.list_view.visualRect(self.model.index(row))
        menu.popup(self.list_view.viewport().mapToGlobal(rect.bottomLeft()))
        return menu

    def _load_summaries(self) -> None:
        thread = self._transcript.thread_id
        if self._memory is None or not self._transcript.marks.wants_summaries(thread):
            return
        assert thread is not None
        transcript = self._transcript
        self._memory.load_summaries(
            thread, lambda summary, anchor: transcript.add_summary(thread, summary, anchor)
        )

    def _on_transcript_summaries_stale(self, _thread_id: str) -> None:
        self._load_summaries()

    def flush(self) -> None:
        """Append the text streamed since the last frame to its documents (one pass)."""
        self._frame.stop()
        for row, text in self._pending.take():
            if not 0 <= row < len(self._transcript):
                continue
            entry = self._transcript.peek(row)
            if not isinstance(entry, MessageEntry):
                continue
            stream = self.docs.streams.get(id(entry))
            if stream is None:
                if entry.streaming:
                    self.docs.stream_for(entry)
            else:  # also the last tokens of an answer that has just finished
                missing = entry.length - stream.fed
                if missing > len(text):  # pending text was dropped when rows moved
                    stream.append(entry.settle().text[-missing:])
                elif missing > 0:
                    stream.append(text[-missing:])
            if entry.streaming:
                self._show_stream_growth(row, entry)
        if self._pinned:
            QTimer.singleShot(0, self, self._scroll_to_end)

    def _show_stream_growth(self, row: int, entry: MessageEntry) -> None:
        """Lay the rows out again only when the answer got taller; else repaint its row."""
        height = self.list_view.delegate.stream_height(entry)
        index = self.model.index(row)
        if self._stream_heights.get(id(entry)) != height:
            self._stream_heights[id(entry)] = height
            self.list_view.delegate.sizeHintChanged.emit(index)
        else:
            self.list_view.viewport().update(self.list_view.visualRect(index))

    def _on_model_text_appended(self, row: int, text: str) -> None:
        self._pending.add(row, text)
        if not self._frame.isActive():
            self._frame.start()

    def _on_model_reset(self) -> None:
        self._pending.clear()
        self._stream_heights.clear()
        self.docs.clear()
        self.list_view.delegate.clear()
        self._loading = None
        self._place.drop()
        for row in range(len(self._transcript)):
            self._start_stream(row)
        self._load_summaries()
        if self._revealing is None:
            self._pinned = not self._transcript.has_newer
            QTimer.singleShot(0, self, self._scroll_to_end_if_pinned)

    def _on_model_about_to_shift(self, first: int, last: int, inserted: bool) -> None:
        self._pending.clear()
        self._place.shifting(first, last, inserted, following_end=self._pinned)

    def _on_rows_inserted(self, _parent: _Index, first: int, last: int) -> None:
        for row in range(first, last + 1):
            self._start_stream(row)

    def _start_stream(self, row: int) -> None:
        entry = self._transcript.peek(row)
        if isinstance(entry, MessageEntry) and entry.streaming:
            self.docs.stream_for(entry)

    def _on_model_data_changed(self, top_left: QModelIndex, _bottom_right: QModelIndex) -> None:
        row = top_left.row()
        if 0 <= row < len(self._transcript):
            self._invalidate(row)

    def _invalidate(self, row: int) -> None:
        self.flush()
        entry = self._transcript.peek(row)
        if isinstance(entry, MessageEntry) and entry.streaming:
            pass  # its document grows in place
        elif isinstance(entry, MessageEntry) and self.docs.has_stream(entry):
            self.docs.forget(entry)
            self.docs.end_stream(entry.settle())
        else:
            self.docs.forget(entry)
        self.list_view.delegate.forget(entry)
        self.list_view.delegate.sizeHintChanged.emit(self.model.index(row))

    def _on_list_view_clicked(self, index: QModelIndex) -> None:
        if isinstance(self._transcript.peek(index.row()), MemoryChipEntry):
            self.open_chip_menu(index.row())
        else:
            self.toggle_tool(index.row())

    def _on_scroll_value_changed(self, value: int) -> None:
        bar = self.list_view.verticalScrollBar()
        self._pinned = value >= bar.maximum() - PIN_SLACK_PX and not self._transcript.has_newer
        if value <= LOAD_MARGIN_PX and self._transcript.has_older:
            self._request(lambda history: history.load_older())
        elif value >= bar.maximum() - LOAD_MARGIN_PX and self._transcript.has_newer:
            self._request(lambda history: history.load_newer())

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if not self._place.restore() and self._pinned:
            self.list_view.verticalScrollBar().setValue(maximum)

    def _scroll_to_end(self) -> None:
        bar = self.list_view.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _scroll_to_end_if_pinned(self) -> None:
        if self._pinned:
            self._scroll_to_end()

    def _request(self, ask: Any) -> None:
        if self._history is None or (self._loading is not None and not self._loading.done):
            return
        pending = ask(self._history)
        if pending is None:
            return
        self._loading = pending
        pending.then(self._on_page_loaded, self._on_page_failed)

    def _on_page_loaded(self, _result: object) -> None:
        self._loading = None
        # A page that left the view at an edge (its rows laid out shorter than estimated) must
        # not strand the author there: scrolling further at the edge moves nothing, so no
        # scroll event would ask for the next page. Look again once the rows are laid out.
        QTimer.singleShot(0, self, self._on_page_settled)

    def _on_page_settled(self) -> None:
        self._on_scroll_value_changed(self.list_view.verticalScrollBar().value())

    def _on_page_failed(self, error: ErrorObject) -> None:
        self._loading = None
        logger.warning("loading a page of the thread failed: %s", error.message)

    def go_to_start(self) -> None:
        """Ctrl+Home (here, or in the composer): the thread's first message."""
        self._settle.stop()
        if self._transcript.has_older and self._history is not None:
            self._pinned = False
            pending = self._history.jump_to_start()
            if pending is not None:
                pending.then(
                    lambda _r: QTimer.singleShot(0, self.list_view, self.list_view.scrollToTop)
                )
                return
        self.list_view.scrollToTop()

    def go_to_end(self) -> None:
        """Ctrl+End (here, or in the composer): the newest message, followed from now on."""
        self._settle.stop()
        if self._transcript.has_newer and self._history is not None:
            self._history.jump_to_end()
        self._pinned = True
        self._scroll_to_end()

    def _on_find_bar_search_requested(self, query: str) -> None:
        if self._history is None:
            return
        pending = self._history.search_thread(query)
        if pending is None:
            self.find_bar.show_hits(query, ())
            return
        pending.then(
            lambda result: self._on_search_result(query, result),
            lambda error: self.find_bar.show_error(f"Search failed: {error.message}"),
        )

    def _on_search_result(self, query: str, result: ThreadSearchResult) -> None:
        self.find_bar.show_hits(query, result.hits, result.has_more)

    def _on_find_bar_results_shown(self, results: FindResults) -> None:
        marks = self.list_view.delegate.marks
        marks.set_query(results.query if results else "")
        self.list_view.viewport().update()

    def _on_find_bar_match_activated(self, match: FindMatch) -> None:
        self.list_view.delegate.marks.set_current(match.hit.message_id, match.occurrence)
        self.list_view.viewport().update()
        self.reveal(match.hit.message_id, match.hit.seq, match.occurrence)

    def _on_find_bar_closed(self) -> None:
        self.list_view.delegate.marks.clear()
        self.list_view.viewport().update()
        self.list_view.setFocus()

    def reveal(self, message_id: str, seq: int, occurrence: int | None = None) -> None:
        """Scroll to a message (to its match number `occurrence`, when given), loading its
        page first when it is not in the list."""
        self._pinned = False
        if self._select_message(message_id, occurrence):
            return
        if self._history is None:
            return
        self._revealing = message_id
        pending = self._history.reveal_message(message_id, seq)
        if pending is None:
            self._revealing = None
            return
        pending.then(
            lambda _r: self._on_revealed(message_id, occurrence),
            lambda _e: self._on_revealed("", None),
        )

    def _on_revealed(self, message_id: str, occurrence: int | None) -> None:
        self._revealing = None
        if message_id:
            self._select_message(message_id, occurrence)

    def _select_message(self, message_id: str, occurrence: int | None = None) -> bool:
        row = self._transcript.row_of_message(message_id)
        if row is None:
            return False
        index = self.model.index(row)
        self.list_view.setCurrentIndex(index)
        self._scroll_to_row(row, occurrence)
        # Again once the rows around it are laid out at their painted heights.
        self._settle_target = (message_id, occurrence)
        self._settle.start()
        return True

    def _on_settle_timeout(self) -> None:
        target, self._settle_target = self._settle_target, None
        row = self._transcript.row_of_message(target[0]) if target is not None else None
        if target is not None and row is not None:
            self._scroll_to_row(row, target[1])

    def _scroll_to_row(self, row: int, occurrence: int | None = None) -> None:
        """Centre a row, or, with `occurrence`, bring that match of it to a third of the way
        down the view (a long message is not shown from its middle)."""
        if not 0 <= row < self.model.rowCount():
            return
        index = self.model.index(row)
        box = self._match_box(row, occurrence) if occurrence is not None else None
        if box is None:
            self.list_view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
            return
        bar = self.list_view.verticalScrollBar()
        target = bar.value() + box.top() - self.list_view.viewport().height() // 3
        bar.setValue(max(bar.minimum(), min(bar.maximum(), target)))

    def _match_box(self, row: int, occurrence: int) -> QRect | None:
        """Where match `occurrence` of a row's message is, in the viewport's coordinates."""
        entry = self._transcript.peek(row)
        if not isinstance(entry, MessageEntry):
            return None
        delegate = self.list_view.delegate
        doc = self.docs.document(entry, delegate.body_width())
        box = delegate.marks.box(doc, occurrence)
        if box is None:
            return None
        rect = self.list_view.visualRect(self.model.index(row))
        left = rect.left() + MARGIN + PADDING
        top = rect.top() + delegate.body_top(entry)
        return box.translated(left, top).toAlignedRect()

    def current_match_rect(self) -> QRect | None:
        """Where Find's current match is in the viewport (None: no current match, or its
        message is not in the list)."""
        current = self.list_view.delegate.marks.current
        row = self._transcript.row_of_message(current[0]) if current is not None else None
        if current is None or row is None:
            return None
        entry = self._transcript.peek(row)
        doc = self.docs.document(entry, self.list_view.delegate.body_width())
        shown = self.list_view.delegate.marks.current_in(doc, current[0])
        return self._match_box(row, shown) if shown is not None else None

    def marked_matches(self, row: int) -> list[tuple[str, bool]]:
        """The text Find marks in a row's message, in reading order, and whether each is the
        current match."""
        entry = self._transcript.peek(row)
        if not isinstance(entry, MessageEntry):
            return []
        doc = self.docs.document(entry, self.list_view.delegate.body_width())
        return self.list_view.delegate.marks.marked(doc, entry.message_id)

    def selected_message_id(self) -> str | None:
        """The message of the selected row (e.g. the find bar's current hit)."""
        index = self.list_view.currentIndex()
        if not index.isValid():
            return None
        entry = self._transcript.peek(index.row())
        return entry.message_id if isinstance(entry, MessageEntry) else None

    @property
    def keeping_place(self) -> bool:
        """Whether rows that just came in above are being laid out with the place held."""
        return self._place.holding

    def row_is_visible(self, row: int) -> bool:
        rect = self.list_view.visualRect(self.model.index(row))
        return rect.isValid() and rect.intersects(self.list_view.viewport().rect())
