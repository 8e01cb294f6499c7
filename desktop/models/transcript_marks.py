"""Marks between a transcript's messages: a chip for every memory saved or forgotten during a
turn, a "context" chip under each of the author's messages (what the agent saw that turn: each
part with its tokens, what was left out and why), and a divider where a summary of earlier
messages ends. Plain Python, no Qt.

A mark is placed by a message id, not by a row, so it comes back wherever that message is shown
again: after the thread is opened anew (in this session), after a page is added or dropped, or
after a jump. A memory chip follows the message that was last in the thread when the memory
changed (the turn's answer, or its question when the memory was saved before the answer); a
context chip follows the author's message its turn answers, before the turn's memory chips; a
divider stands before the first message after the summarized range.

`TranscriptMarks` keeps the marks of every thread, fed with each thread's run events (not only
the selected one's), so a turn that ran in the background shows its chips when its thread is
opened. The chips of earlier sessions come from the sidecar's stored memory and context events
(`memory/events`, asked for once per thread, each naming the message its chip follows); one
already shown from a live event is not shown twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from desktop.models.memory import describe_context
from sidecar.protocol import (
    ContextEvent,
    MemoryEvent,
    MemoryEventInfo,
    MemoryInfo,
    MessageEvent,
    RunEventBody,
    SummaryInfo,
)

CHIP_TEXT_MAX = 160
"""Characters of a memory shown in its chip (the whole text is in its tooltip)."""

_ACTION_TEXT = {
    "saved": "Saved to {tier} memory",
    "updated": "Updated in {tier} memory",
    "pinned": "Pinned in {tier} memory",
    "unpinned": "Unpinned in {tier} memory",
    "forgotten": "Forgot",
}


@dataclass(eq=False)
class MemoryChipEntry:
    """A memory saved, changed or forgotten: one small row under the turn that did it.

    `action` and `memory` change when the author acts on the chip (moved, edited, forgotten).
    """

    action: str
    key: str
    memory: MemoryInfo | None = None
    error: str | None = None
    anchor: str | None = None
    """The id of the message the chip follows."""
    origin: MemoryEvent | None = field(default=None, repr=False)
    """The event the chip was made from (it tells a stored event already shown live)."""

    @classmethod
    def of(cls, event: MemoryEvent, anchor: str | None) -> MemoryChipEntry:
        return cls(event.action, event.key, event.memory, event.error, anchor, event)

    @property
    def actionable(self) -> bool:
        """The memory still exists, so it can be edited, moved or forgotten."""
        return self.memory is not None and self.action not in {"forgotten", "failed"}

    def revise(self, action: str, memory: MemoryInfo | None) -> None:
        """The author changed the memory from the chip (`memory`: what the sidecar returned)."""
        self.action, self.error = action, None
        if memory is not None:
            self.memory = memory


@dataclass(eq=False)
class SummaryDividerEntry:
    """Where a summary of earlier messages ends; shows the summary when expanded."""

    summary: SummaryInfo
    anchor: str
    """The id of the first message after the summarized range (the divider stands before it)."""

    @property
    def key(self) -> str:
        return f"summary:{self.summary.to_seq}"


@dataclass(eq=False)
class ContextChipEntry:
    """What the agent saw in one turn: a chip under the author's message; expanded, every part
    of the context with its tokens, and what was left out and why."""

    report: ContextEvent
    anchor: str | None = None
    """The id of the author's message the turn answers (the chip follows it)."""

    @property
    def key(self) -> str:
        return f"context:{id(self)}"

    @property
    def origin(self) -> ContextEvent:
        return self.report


ChipEntry = MemoryChipEntry | ContextChipEntry
MarkEntry = MemoryChipEntry | ContextChipEntry | SummaryDividerEntry
MARK_TYPES = (MemoryChipEntry, ContextChipEntry, SummaryDividerEntry)
"""The entry types that are marks (for `isinstance`)."""


def chip_text(chip: MemoryChipEntry) -> str:
    """The chip's one line: "Saved to workspace memory: The editor is Zofia." or why not."""
    if chip.action == "failed" or chip.error:
        return f"Memory not saved: {chip.error or 'unknown error'}"
    memory = chip.memory
    text = memory.text if memory is not None else chip.key
    text = " ".join(text.split())
    if len(text) > CHIP_TEXT_MAX:
        text = text[: CHIP_TEXT_MAX - 1] + "…"
    tier = memory.tier if memory is not None else "its"
    label = _ACTION_TEXT.get(chip.action, chip.action.capitalize()).format(tier=tier)
    return f"{label}: {text}"


def context_chip_text(chip: ContextChipEntry, expanded: bool) -> str:
    """The chip's line ("Context: 14 parts, 2 left out, 290 tools deferred — show"), and every
    part under it when expanded. Token counts are only in the expanded details: the line sits
    under every message the author sends, where a count is noise."""
    report = chip.report
    parts = sum(1 for item in report.items if item.included)
    left_out = sum(1 for item in report.items if not item.included) + report.left_out_messages
    head = f"Context: {parts} part{_s(parts)}"
    if left_out:
        head += f", {left_out:,} left out"
    if report.compaction is not None and report.compaction.performed:
        head += ", compacted"
    if report.tools_deferred:
        head += f", {report.tools_deferred:,} tool{_s(report.tools_deferred)} deferred"
    if report.warnings:
        head += f", {len(report.warnings)} warning{_s(len(report.warnings))}"
    head += f" — {'hide' if expanded else 'show'}"
    return head + "\n\n" + "\n".join(describe_context(report)) if expanded else head


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def divider_text(divider: SummaryDividerEntry, expanded: bool) -> str:
    """The divider's line, and the summary under it when expanded."""
    summary = divider.summary
    count = f"{summary.messages} message{'s' if summary.messages != 1 else ''}"
    head = f"Earlier messages summarized ({count}) — {'hide' if expanded else 'show'}"
    return f"{head}\n\n{summary.text}" if expanded else head


@dataclass
class ThreadMarks:
    """One thread's marks: chips by the message they follow, dividers by the one they precede."""

    last_message: str | None = None
    chips: dict[str, list[ChipEntry]] = field(default_factory=dict)
    dividers: dict[int, SummaryDividerEntry] = field(default_factory=dict)
    summaries_loaded: bool = False
    events_loaded: bool = False

    def chips_after(self, message_id: str) -> list[ChipEntry]:
        return self.chips.get(message_id, [])

    def dividers_before(self, message_id: str) -> list[SummaryDividerEntry]:
        return sorted(
            (d for d in self.dividers.values() if d.anchor == message_id),
            key=lambda d: d.summary.to_seq,
        )


MessageKey = Callable[[object], tuple[bool, str | None]]
"""(is it a message row, its id if known) for a transcript entry."""


class TranscriptMarks:
    """The marks of every thread seen in this session."""

    def __init__(self) -> None:
        self._threads: dict[str, ThreadMarks] = {}

    def of(self, thread_id: str | None) -> ThreadMarks:
        if thread_id is None:
            return ThreadMarks()
        return self._threads.setdefault(thread_id, ThreadMarks())

    def note(self, thread_id: str | None, event: RunEventBody) -> ChipEntry | None:
        """Take in a run event of a thread; returns the new chip for a memory or context
        event."""
        if thread_id is None or not isinstance(event, MessageEvent | MemoryEvent | ContextEvent):
            return None  # most events are streamed text: nothing to look at
        marks = self.of(thread_id)
        match event:
            case MessageEvent(message=message) if message.role == "user" or (
                message.role == "assistant" and message.content
            ):
                marks.last_message = message.id
            case MemoryEvent():
                chip = MemoryChipEntry.of(event, marks.last_message)
                self.add_chip(thread_id, chip)
                return chip
            case ContextEvent(compaction=compaction):
                if compaction is not None and compaction.performed:
                    marks.summaries_loaded = False
                if event.message_id is not None:  # the author's message, never echoed live
                    marks.last_message = event.message_id
                context = ContextChipEntry(event, event.message_id)
                self.add_chip(thread_id, context)
                return context
            case _:
                pass
        return None

    def add_chip(self, thread_id: str, chip: ChipEntry) -> None:
        if chip.anchor is not None:
            self.of(thread_id).chips.setdefault(chip.anchor, []).append(chip)

    def add_stored(self, thread_id: str, stored: Iterable[MemoryEventInfo]) -> list[ChipEntry]:
        """Take in the thread's stored memory and context events (oldest first); returns the
        new chips.

        An event stored while the window was connected was also sent live, before the answer,
        so it has its chip already: each chip made from an equal event stands for one stored
        event, and only the others get chips."""
        marks = self.of(thread_id)
        shown: defaultdict[MemoryEvent | ContextEvent, int] = defaultdict(int)
        for chips in marks.chips.values():
            for chip in chips:
                if chip.origin is not None:
                    shown[chip.origin] += 1
        added: list[ChipEntry] = []
        for info in stored:
            if shown[info.event] > 0:
                shown[info.event] -= 1
                continue
            chip: ChipEntry = (
                ContextChipEntry(info.event, info.after_message)
                if isinstance(info.event, ContextEvent)
                else MemoryChipEntry.of(info.event, info.after_message)
            )
            if chip.anchor is not None:
                self.add_chip(thread_id, chip)
                added.append(chip)
        return added

    def add_divider(self, thread_id: str, divider: SummaryDividerEntry) -> bool:
        """Keep a divider; False when the same summary is placed already."""
        dividers = self.of(thread_id).dividers
        if divider.summary.to_seq in dividers:
            return False
        dividers[divider.summary.to_seq] = divider
        return True

    def note_shown(self, thread_id: str | None, message_ids: Iterable[str | None]) -> None:
        """The thread's newest messages as loaded: a chip of a turn still to come follows the
        last of them unless an event named a newer one."""
        last = next((m for m in reversed(list(message_ids)) if m), None)
        marks = self.of(thread_id)
        if thread_id is not None and marks.last_message is None:
            marks.last_message = last

    def wants_summaries(self, thread_id: str | None) -> bool:
        """True once per thread (and again after a compaction): ask for its summaries."""
        if thread_id is None:
            return False
        marks = self.of(thread_id)
        wanted, marks.summaries_loaded = not marks.summaries_loaded, True
        return wanted

    def wants_memory_events(self, thread_id: str | None) -> bool:
        """True once per thread: ask for its stored memory events (`memory/events`)."""
        if thread_id is None:
            return False
        marks = self.of(thread_id)
        wanted, marks.events_loaded = not marks.events_loaded, True
        return wanted

    def memory_events_failed(self, thread_id: str) -> None:
        """Reading them failed: ask again the next time the thread is opened."""
        self.of(thread_id).events_loaded = False


def weave(
    entries: Sequence[object],
    marks: ThreadMarks,
    message_key: MessageKey,
    before: str | None = None,
) -> list[object]:
    """`entries` without marks, with the thread's marks put in at their messages: dividers
    before theirs, a context chip right after its message, memory chips after their message and
    the rows under it (its tool calls). `before`: the id of the message that will follow the
    result (a page added in front of it)."""
    out: list[object] = []
    pending: list[ChipEntry] = []
    for entry in entries:
        if isinstance(entry, MARK_TYPES):
            continue
        is_message, message_id = message_key(entry)
        if is_message:
            out += pending
            pending = []
            if message_id is not None:
                out += marks.dividers_before(message_id)
                chips = marks.chips_after(message_id)
                out.append(entry)
                out += [c for c in chips if isinstance(c, ContextChipEntry)]
                pending = [c for c in chips if not isinstance(c, ContextChipEntry)]
                continue
        out.append(entry)
    out += pending
    if before is not None:
        out += marks.dividers_before(before)
    return out
