"""The transcript of the selected thread: messages, the streaming answer, compact tool calls,
the reports of delegated plans (`AnnouncementEntry`, a message row of its own kind).

Plain Python: `load` builds it from `thread/get` (the newest page), `apply` advances it by one
run event, `prepend` adds an older page (`thread/messages`) and `show_page` replaces it with a
page anywhere in the thread (a search hit far back), which leaves the transcript *detached* from
the live end until the newer pages are added again (`append_newer`).

Views subscribe to `reset`, `inserted(row)`, `updated(row)`, `appended(row, text)` (streamed
text added at the end of a message: the view appends it, never re-sets the whole text),
`prepended(count)` (rows 0..count-1 are new) and `removed(first, last)` (rows dropped at one
end to keep at most `MAX_ROWS`). `inserted` may name a row before the end: a mark (a memory chip,
a summary divider, see `transcript_marks`) put in at its message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

from desktop.models.emitter import Emitter
from desktop.models.transcript_entries import (
    MessageEntry,
    NoticeEntry,
    ToolCallEntry,
    TranscriptEntry,
    announcement_entry,
)
from desktop.models.transcript_marks import (
    MARK_TYPES,
    ChipEntry,
    MemoryChipEntry,
    SummaryDividerEntry,
    TranscriptMarks,
    weave,
)
from sidecar.protocol import (
    ApprovalInterrupt,
    ContextEvent,
    InterruptEvent,
    InterruptInfo,
    MemoryEventInfo,
    MemoryInfo,
    MessageEvent,
    MessageInfo,
    RunCancelled,
    RunEventBody,
    RunFailed,
    RunFinished,
    RunStarted,
    SummaryInfo,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)


def _message_key(entry: object) -> tuple[bool, str | None]:
    if isinstance(entry, MessageEntry):
        return True, None if entry.local else entry.message_id
    return False, None


def _compacted(event: ContextEvent) -> bool:
    return event.compaction is not None and event.compaction.performed


def _has_row(message: MessageInfo) -> bool:
    return message.role == "user" or (message.role == "assistant" and bool(message.content))


HistoryPage: TypeAlias = Sequence[tuple[int, MessageInfo]]
"""Messages with their seqs, oldest first (a `thread/messages` page)."""

INITIAL_PAGE = 200
"""Messages `thread/get` is asked for when a thread is opened (the newest page)."""

MAX_ROWS = 600
"""Rows kept at most: past this, a page added at one end drops rows at the other, so laying
out the list costs the same at message 600 and message 100,000."""


class Transcript:
    """Entries of one thread, in display order: a contiguous stretch of its history.

    `has_older`: messages exist before the first entry (load them with `prepend`).
    `has_newer`: the stretch ends before the live end (after `show_page`); run events are not
    shown until `append_newer` reaches the end again.
    """

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self._entries: list[TranscriptEntry] = []
        self.has_older = False
        self.has_newer = False
        self.max_rows = MAX_ROWS
        self._known_ids: set[str] = set()  # every message id shown (maybe a few more)
        self._locals = 0  # the author's messages not yet echoed back
        self._streamed = False  # an answer streamed since the last reset (may still stream)
        self.reset: Emitter[[]] = Emitter()
        self.inserted: Emitter[[int]] = Emitter()
        self.updated: Emitter[[int]] = Emitter()
        self.appended: Emitter[[int, str]] = Emitter()
        self.prepended: Emitter[[int]] = Emitter()
        self.removed: Emitter[[int, int]] = Emitter()
        self.marks = TranscriptMarks()
        self.summaries_stale: Emitter[[str]] = Emitter()
        """A compaction ran in the shown thread: its summaries are worth asking for again."""

    @property
    def entries(self) -> tuple[TranscriptEntry, ...]:
        for entry in self._entries:
            if isinstance(entry, MessageEntry):
                entry.settle()
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, row: int) -> TranscriptEntry:
        entry = self._entries[row]
        return entry.settle() if isinstance(entry, MessageEntry) else entry

    def peek(self, row: int) -> TranscriptEntry:
        """The entry without joining streamed chunks (for per-frame work on a long answer)."""
        return self._entries[row]

    def clear(self, thread_id: str | None = None) -> None:
        self.thread_id = thread_id
        self._entries = []
        self._known_ids, self._locals, self._streamed = set(), 0, False
        self.has_older = self.has_newer = False
        self.reset.emit()

    def oldest_message_id(self) -> str | None:
        """The id of the first message shown (the cursor for the next older page)."""
        for entry in self._entries:
            if isinstance(entry, MessageEntry) and entry.message_id and not entry.local:
                return entry.message_id
        return None

    def newest_seq(self) -> int | None:
        """The seq of the last message shown, when known (the cursor for newer pages)."""
        for entry in reversed(self._entries):
            if isinstance(entry, MessageEntry) and entry.seq is not None:
                return entry.seq
        return None

    def row_of_entry(self, entry: object) -> int | None:
        """The row holding this very entry (by identity), or None."""
        for row, held in enumerate(self._entries):
            if held is entry:
                return row
        return None

    def row_of_message(self, message_id: str) -> int | None:
        """The row showing a message (a tool result shows as its call's row)."""
        row = self._message_row(message_id)
        if row is not None:
            return row
        for row, entry in enumerate(self._entries):
            if isinstance(entry, ToolCallEntry) and entry.result_message_id == message_id:
                return row
        return None

    def prepend(self, page: HistoryPage, has_older: bool) -> int:
        """Add an older page before the first entry; returns how many rows were added."""
        older = Transcript()
        for seq, message in page:
            older._apply_message(message, notify=False, seq=seq)
        added: list[TranscriptEntry] = []
        for entry in older._entries:
            if isinstance(entry, ToolCallEntry) and self._merge_call(entry):
                continue
            added.append(entry)
        first = self._entries[0] if self._entries else None
        before = first.message_id if isinstance(first, MessageEntry) else None
        added = self._weave(added, before)
        self._entries[:0] = added
        self._known_ids |= older._known_ids
        self.has_older = has_older
        if added:
            self.prepended.emit(len(added))
        if len(self._entries) > self.max_rows:
            self._drop_newest(len(self._entries) - self.max_rows)
        return len(added)

    def _drop_newest(self, count: int) -> None:
        """Drop rows at the end (and any message without a seq before them: the page after
        the rest is asked for by seq); the transcript is detached from the live end."""
        end = len(self._entries) - count
        while end > 0:
            last = next(
                (e for e in reversed(self._entries[:end]) if isinstance(e, MessageEntry)), None
            )
            if last is None or last.seq is not None:
                break
            end = self._entries.index(last)
        if end <= 0 or end >= len(self._entries):
            return
        first, last_row = end, len(self._entries) - 1
        del self._entries[end:]
        self.has_newer = True
        self.removed.emit(first, last_row)

    def _drop_oldest(self, count: int) -> None:
        """Drop rows at the start; they are older again."""
        first_message = next(
            (r for r, e in enumerate(self._entries) if r >= count and isinstance(e, MessageEntry)),
            None,
        )
        if first_message is None or first_message == 0:
            return
        del self._entries[:first_message]
        self.has_older = True
        self.removed.emit(0, first_message - 1)

    def show_page(self, page: HistoryPage, has_older: bool, has_newer: bool) -> None:
        """Show a page anywhere in the thread instead of what is shown (jumping to a hit)."""
        self._entries = []
        self._known_ids, self._locals, self._streamed = set(), 0, False
        for seq, message in page:
            self._apply_message(message, notify=False, seq=seq)
        self._entries = self._weave(self._entries)
        self.has_older, self.has_newer = has_older, has_newer
        self.reset.emit()

    def append_newer(self, page: HistoryPage, has_newer: bool) -> None:
        """Add the page after the last entry (walking back towards the live end)."""
        start = len(self._entries)
        for seq, message in page:
            self._apply_message(message, seq=seq)
        self._insert_marks(start)
        self.has_newer = has_newer
        if len(self._entries) > self.max_rows:
            self._drop_oldest(len(self._entries) - self.max_rows)

    def _merge_call(self, older: ToolCallEntry) -> bool:
        row = self._call_row(older.call_id)
        if row is None:
            return False
        entry = self._entries[row]
        assert isinstance(entry, ToolCallEntry)
        entry.server, entry.tool, entry.arguments = older.server, older.tool, older.arguments
        self.updated.emit(row)
        return True

    def load(
        self,
        thread_id: str,
        messages: tuple[MessageInfo, ...],
        interrupts: tuple[InterruptInfo, ...] = (),
        last_error: str | None = None,
    ) -> None:
        """Rebuild from the conversation of record (and the thread's pending interrupts): the
        newest messages; older ones exist when `thread/get` returned a full page."""
        self.thread_id = thread_id
        self._entries = []
        self._known_ids, self._locals, self._streamed = set(), 0, False
        self.has_older = len(messages) >= INITIAL_PAGE
        self.has_newer = False
        for message in messages:
            self._apply_message(message, notify=False)
        for interrupt in interrupts:
            if isinstance(interrupt, ApprovalInterrupt):
                self._await_approval(interrupt, notify=False)
        if last_error:
            self._entries.append(NoticeEntry("failed", last_error))
        self.marks.note_shown(thread_id, (m.id for m in messages if _has_row(m)))
        self._entries = self._weave(self._entries)
        self.reset.emit()

    def add_local_message(self, text: str, *, announcement: bool = False) -> None:
        """Show a message the turn takes at once, before the sidecar confirms it (unless
        detached: then it shows when the live end is loaded again): the author's own, or a
        delegated plan's announcement delivered from the queue (its own kind of row)."""
        if not self.has_newer:
            self._locals += 1
            if announcement:
                self._append(announcement_entry(text, local=True))
            else:
                self._append(MessageEntry("user", text, local=True))

    def apply(self, event: RunEventBody) -> None:
        """Advance by one run event of this thread (not shown while detached: the messages it
        leads to are read back from the sidecar when the newer pages are added)."""
        chip = self.marks.note(self.thread_id, event)
        if self.has_newer:
            return
        match event:
            case Token(text=text):
                self._append_token(text)
            case MessageEvent(message=message):
                self._apply_message(message)
            case ToolCall():
                self._apply_tool_call(event)
            case ToolProgress():
                self._apply_progress(event)
            case ToolResult(call_id=call_id, is_error=is_error, content=content):
                self._apply_result(call_id, is_error, content)
            case InterruptEvent(interrupt=ApprovalInterrupt() as interrupt):
                self._await_approval(interrupt)
            case RunStarted():
                self._resume_awaiting_calls()
            case RunFinished():
                self._finish_streaming()
            case RunFailed(error=error):
                self._finish_streaming()
                self._append(NoticeEntry("failed", error.message))
            case RunCancelled():
                self._finish_streaming()
                self._append(NoticeEntry("cancelled", "Cancelled"))
            case _:
                self._apply_mark_event(event, chip)

    def _apply_mark_event(self, event: RunEventBody, chip: ChipEntry | None) -> None:
        if chip is not None:
            self._show_chip(chip)
        if isinstance(event, ContextEvent) and self.thread_id is not None and _compacted(event):
            self.summaries_stale.emit(self.thread_id)

    def _show_chip(self, chip: ChipEntry) -> None:
        """Under the turn: at the end, or above an answer still streaming (the chip follows
        the message before it, as it will when the thread is opened again)."""
        last = self._entries[-1] if self._entries else None
        if isinstance(last, MessageEntry) and last.streaming:
            self._insert(len(self._entries) - 1, chip)
        else:
            self._append(chip)

    def add_summary(self, thread_id: str, summary: SummaryInfo, anchor: str) -> None:
        """A summary of earlier messages ends before message `anchor`: a divider there."""
        divider = SummaryDividerEntry(summary, anchor)
        if self.marks.add_divider(thread_id, divider) and thread_id == self.thread_id:
            self._insert_marks()

    def add_stored_chips(self, thread_id: str, stored: Sequence[MemoryEventInfo]) -> None:
        """Chips for a thread's stored memory and context events (`memory/events`: an earlier
        session's), put in where their messages are shown (the others come with their pages)."""
        if self.marks.add_stored(thread_id, stored) and thread_id == self.thread_id:
            self._insert_marks()

    def revise_chip(self, chip: MemoryChipEntry, action: str, memory: MemoryInfo | None) -> None:
        """The author acted on a chip's memory (moved, edited, forgotten): show what it is now."""
        chip.revise(action, memory)
        row = self.row_of_entry(chip)
        if row is not None:
            self.updated.emit(row)

    def _weave(
        self, entries: list[TranscriptEntry], before: str | None = None
    ) -> list[TranscriptEntry]:
        marks = self.marks.of(self.thread_id)
        if not marks.chips and not marks.dividers:
            return entries
        return weave(entries, marks, _message_key, before)  # type: ignore[return-value]

    def _insert_marks(self, start: int = 0) -> None:
        """Put in, one by one, the thread's marks that belong among rows `start`.. and are not
        shown yet, where `weave` places them (the one rule for a page, a reload and a mark that
        arrives later)."""
        shown = {id(e) for e in self._entries[start:] if isinstance(e, MARK_TYPES)}
        row = start
        for entry in self._weave(self._entries[start:]):
            if isinstance(entry, MARK_TYPES) and id(entry) not in shown:
                self._insert(row, entry)
                row += 1
                continue
            found = row  # a row already there: go on after it
            while found < len(self._entries) and self._entries[found] is not entry:
                found += 1
            if found < len(self._entries):
                row = found + 1

    def _insert(self, row: int, entry: TranscriptEntry) -> None:
        self._entries.insert(row, entry)
        self.inserted.emit(row)

    def _append(self, entry: TranscriptEntry) -> None:
        self._entries.append(entry)
        self.inserted.emit(len(self._entries) - 1)

    def _changed(self, row: int, notify: bool = True) -> None:
        if notify:
            self.updated.emit(row)

    def _streaming_row(self) -> int | None:
        if not self._streamed:
            return None
        for row in range(len(self._entries) - 1, -1, -1):
            entry = self._entries[row]
            if isinstance(entry, MessageEntry) and entry.streaming:
                return row
        return None

    def _append_token(self, text: str) -> None:
        last = self._entries[-1] if self._entries else None
        if isinstance(last, MessageEntry) and last.streaming:
            last.append(text)
            self.appended.emit(len(self._entries) - 1, text)
        else:
            self._streamed = True
            self._append(MessageEntry("assistant", text, streaming=True))

    def _finish_streaming(self) -> None:
        row = self._streaming_row()
        if row is not None:
            entry = self._entries[row]
            assert isinstance(entry, MessageEntry)
            entry.settle().streaming = False
            self.updated.emit(row)

    def _message_row(self, message_id: str) -> int | None:
        if message_id not in self._known_ids:
            return None
        for row in range(len(self._entries) - 1, -1, -1):  # a message just added is last
            entry = self._entries[row]
            if isinstance(entry, MessageEntry) and entry.message_id == message_id:
                return row
        return None

    def _apply_message(
        self, message: MessageInfo, notify: bool = True, seq: int | None = None
    ) -> None:
        if message.role == "tool":
            if message.tool_call_id is not None:
                self._apply_result(message.tool_call_id, message.is_error, message.content, notify)
                row = self._call_row(message.tool_call_id)
                if row is not None:
                    call = self._entries[row]
                    assert isinstance(call, ToolCallEntry)
                    call.result_message_id = message.id
            return
        if self._message_row(message.id) is None:
            if message.role == "user":
                self._adopt_user_message(message, notify)
            else:
                self._adopt_assistant_message(message, notify)
            self._known_ids.add(message.id)
            row = self._message_row(message.id)
            if row is not None and seq is not None:
                entry = self._entries[row]
                assert isinstance(entry, MessageEntry)
                entry.seq = seq
        for call in message.tool_calls:
            self._ensure_call(call.id, call.server, call.tool, call.arguments, notify)

    def _adopt_user_message(self, message: MessageInfo, notify: bool) -> None:
        for row, entry in enumerate(self._entries if self._locals else ()):
            if isinstance(entry, MessageEntry) and entry.local and entry.text == message.content:
                entry.local, entry.message_id = False, message.id
                self._locals -= 1
                self._changed(row, notify)
                return
        if message.announcement:  # a delegated plan's report: a row of its own kind
            self._add(announcement_entry(message.content, message.id), notify)
        else:
            self._add(MessageEntry("user", message.content, message.id), notify)

    def _adopt_assistant_message(self, message: MessageInfo, notify: bool) -> None:
        row = self._streaming_row()
        if row is not None:
            entry = self._entries[row]
            assert isinstance(entry, MessageEntry)
            entry.settle()
            if message.content and message.content != entry.text:
                entry.text, entry.rewritten = message.content, True
            entry.message_id, entry.streaming = message.id, False
            self._changed(row, notify)
        elif message.content:
            self._add(MessageEntry("assistant", message.content, message.id), notify)

    def _add(self, entry: TranscriptEntry, notify: bool) -> None:
        if notify:
            self._append(entry)
        else:
            self._entries.append(entry)

    def _call_row(self, call_id: str) -> int | None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, ToolCallEntry) and entry.call_id == call_id:
                return row
        return None

    def _ensure_call(
        self, call_id: str, server: str, tool: str, arguments: dict[str, Any], notify: bool = True
    ) -> tuple[int, ToolCallEntry]:
        row = self._call_row(call_id)
        if row is None:
            self._add(ToolCallEntry(call_id, server, tool, dict(arguments)), notify)
            row = len(self._entries) - 1
        entry = self._entries[row]
        assert isinstance(entry, ToolCallEntry)
        return row, entry

    def _apply_tool_call(self, event: ToolCall) -> None:
        row, entry = self._ensure_call(event.call_id, event.server, event.tool, event.arguments)
        entry.server, entry.tool, entry.arguments = event.server, event.tool, dict(event.arguments)
        self.updated.emit(row)

    def _apply_progress(self, event: ToolProgress) -> None:
        row = self._call_row(event.call_id)
        if row is None:
            return
        entry = self._entries[row]
        assert isinstance(entry, ToolCallEntry)
        entry.progress, entry.total = event.progress, event.total
        entry.progress_message = event.message
        self.updated.emit(row)

    def _apply_result(
        self, call_id: str, is_error: bool, content: str, notify: bool = True
    ) -> None:
        row, entry = self._ensure_call(call_id, "", call_id, {}, notify)
        entry.state = "failed" if is_error else "succeeded"
        entry.result = content
        self._changed(row, notify)

    def _await_approval(self, interrupt: ApprovalInterrupt, notify: bool = True) -> None:
        if interrupt.task_id is not None:
            return  # a subagent's call: its result reaches the run tree, never this transcript
        row, entry = self._ensure_call(
            interrupt.call_id, interrupt.server, interrupt.tool, interrupt.arguments, notify
        )
        if entry.result is None:
            entry.state = "awaiting_approval"
            self._changed(row, notify)

    def _resume_awaiting_calls(self) -> None:
        for row, entry in enumerate(self._entries):
            if isinstance(entry, ToolCallEntry) and entry.state == "awaiting_approval":
                entry.state = "pending"
                self.updated.emit(row)
