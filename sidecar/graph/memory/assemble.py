"""Assemble one turn's context within its token budget, and say what went in and what did not.

Order: pinned items (identity files, pinned memories; never dropped), relevant memories (searched
with the new message), the thread's summary, the recent messages (newest first until their share
is full; the newest author message always), and older messages that match the new message.
Everything is read with index range scans and FTS5 lookups, so the cost does not grow with the
thread's length or the number of memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_servers.memory import Memory, MemoryStore, Scope
from mcp_servers.memory.query import fts_query
from sidecar.graph.memory.budget import Budget
from sidecar.graph.memory.identity import ROLES, Identity
from sidecar.graph.memory.render import identity_note, mark_data
from sidecar.graph.memory.tokens import TokenCounter
from sidecar.store import Store
from sidecar.store.context import ContextRepo, SummaryRecord
from sidecar.store.records import MessageRecord

PAGE = 64
MEMORY_MATCHES = 12
RECENT_MEMORIES = 5
OLDER_MATCHES = 6


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of the `context` report: a part of the context, in or out, and why."""

    kind: str
    label: str
    tokens: int
    included: bool
    reason: str
    ref: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "tokens": self.tokens,
            "included": self.included,
            "reason": self.reason,
            "ref": self.ref,
        }


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """The unsummarized messages `from_seq`..`to_seq` that outgrew the recent share."""

    from_seq: int
    to_seq: int


@dataclass(slots=True)
class Assembly:
    turns: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    items: list[Item] = field(default_factory=list[Item])
    warnings: list[str] = field(default_factory=list[str])
    used: int = 0
    compaction: CompactionPlan | None = None
    first_recent_seq: int | None = None
    left_out_messages: int = 0

    def add(self, item: Item, turn: dict[str, Any] | None = None) -> None:
        self.items.append(item)
        if item.included:
            self.used += item.tokens
            if turn is not None:
                self.turns.append(turn)


@dataclass(frozen=True, slots=True)
class Sources:
    store: Store
    memory: MemoryStore
    contexts: ContextRepo


def assemble(
    sources: Sources,
    *,
    thread_id: str,
    scope: Scope,
    text: str,
    identity: Identity,
    budget: Budget,
    counter: TokenCounter,
    with_memory: bool = True,
) -> Assembly:
    """The context of a turn whose new message is `text` (already in the thread)."""
    out = Assembly(warnings=list(identity.warnings))
    _identity(out, identity)
    summary = sources.contexts.latest_summary(thread_id)
    if with_memory:
        pinned = _pinned(out, sources.memory.pinned(scope), budget, counter)
        _memories(
            out,
            sources.memory,
            scope=scope,
            text=text,
            pinned=pinned,
            budget=budget,
            counter=counter,
        )
    _summary(out, summary, budget, counter)
    notes = len(out.turns)
    reserved_older = budget.older if with_memory else 0
    room = max(0, min(budget.recent, budget.input - out.used - reserved_older))
    _recent(
        out, sources.store, thread_id, summary=summary, room=room, counter=counter, budget=budget
    )
    if with_memory:
        older = _older(out, sources.store, thread_id, text=text, budget=budget, counter=counter)
        if older is not None:
            out.turns.insert(notes, older)
    if out.used > budget.input:
        out.warnings.append(
            f"The pinned items alone take {out.used} tokens, over the input budget of "
            f"{budget.input}: the model may refuse the request."
        )
    return out


def _identity(out: Assembly, identity: Identity) -> None:
    for file in identity.files:
        note = identity_note(file.path, ROLES.get(file.path, "identity"), file.text)
        reason = "pinned, truncated to its budget" if file.truncated else "pinned"
        item = Item("identity", file.path, file.tokens, included=True, reason=reason)
        out.add(item, {"role": "system", "content": note})


def _memory_line(memory: Memory) -> str:
    return f"- [{memory.key}] ({memory.tier}) {memory.text}"


def _pinned(
    out: Assembly, pinned: Sequence[Memory], budget: Budget, counter: TokenCounter
) -> set[str]:
    if not pinned:
        return set()
    lines = [_memory_line(m) for m in pinned]
    for memory, line in zip(pinned, lines, strict=True):
        out.items.append(
            Item("pinned_memory", memory.text[:80], counter.count(line), True, "pinned", memory.key)
        )
    body = mark_data("memory", "\n".join(lines))
    note = f"Pinned memories (always present):\n{body}"
    tokens = counter.count(note)
    out.used += tokens
    out.turns.append({"role": "system", "content": note})
    if tokens > budget.pinned:
        out.warnings.append(
            f"Pinned memories take {tokens} tokens, over their share of {budget.pinned}; "
            "they are kept whole (pinned items are never dropped). Unpin some to make room."
        )
    return {m.key for m in pinned}


def _memories(
    out: Assembly,
    memory: MemoryStore,
    *,
    scope: Scope,
    text: str,
    pinned: set[str],
    budget: Budget,
    counter: TokenCounter,
) -> None:
    matches = memory.search(scope, text, limit=MEMORY_MATCHES)
    found = [(m, "matches the new message") for m in matches]
    seen = pinned | {m.key for m, _ in found}
    if len(found) < RECENT_MEMORIES:
        for recent in memory.recent(scope, limit=RECENT_MEMORIES + len(seen)):
            if recent.key not in seen and len(found) < RECENT_MEMORIES:
                found.append((recent, "recently saved"))
                seen.add(recent.key)
    lines: list[str] = []
    room = budget.memories
    for item, why in found:
        if item.key in pinned:
            continue
        line = _memory_line(item)
        tokens = counter.count(line)
        fits = tokens <= room
        reason = why if fits else "over the memory share"
        out.items.append(Item("memory", item.text[:80], tokens, fits, reason, item.key))
        if fits:
            room -= tokens
            lines.append(line)
    if lines:
        note = "Memories that may help (saved earlier):\n" + mark_data("memory", "\n".join(lines))
        out.used += counter.count(note)
        out.turns.append({"role": "system", "content": note})


def summary_note(summary: SummaryRecord) -> str:
    return (
        f"Summary of earlier messages #{summary.from_seq}-#{summary.to_seq} of this thread "
        f"({summary.messages} messages; the messages themselves are kept and searchable):\n"
        + mark_data("summary", summary.text)
    )


def _summary(
    out: Assembly, summary: SummaryRecord | None, budget: Budget, counter: TokenCounter
) -> None:
    if summary is None:
        return
    note = summary_note(summary)
    tokens = counter.count(note)
    label = f"messages #{summary.from_seq}-#{summary.to_seq}"
    if tokens > budget.summary:
        out.warnings.append(
            f"The thread's summary takes {tokens} tokens, over its share of {budget.summary}."
        )
    out.add(Item("summary", label, tokens, True, "the thread's summary"), _system(note))


def _system(content: str) -> dict[str, Any]:
    return {"role": "system", "content": content}


def _usable(record: MessageRecord) -> bool:
    return record.role in ("user", "assistant") and bool(record.content) and not record.tool_calls


def _recent(
    out: Assembly,
    store: Store,
    thread_id: str,
    *,
    summary: SummaryRecord | None,
    room: int,
    counter: TokenCounter,
    budget: Budget,
) -> None:
    floor = summary.to_seq if summary is not None else 0
    kept: list[tuple[int, MessageRecord, int]] = []
    used = 0
    before: int | None = None
    full = False
    first_seq: int | None = None
    half_first: int | None = None
    while not full:
        page = store.messages_page(thread_id, before_seq=before, limit=PAGE)
        for seq, record in reversed(page.messages):
            if seq <= floor:
                full = True
                break
            first_seq = seq
            if not _usable(record):
                continue
            tokens = counter.message(record.content)
            if used + tokens > room and kept:
                full = True
                first_seq = seq + 1
                break
            used += tokens
            kept.append((seq, record, tokens))
            if used <= room // 2:
                half_first = seq
        if not page.messages or not page.has_older:
            break
        before = page.messages[0][0]
    kept.reverse()
    for _seq, record, _tokens in kept:
        out.turns.append({"role": record.role, "content": record.content})
    out.used += used
    out.first_recent_seq = first_seq
    if kept:
        label = f"{len(kept)} messages #{kept[0][0]}-#{kept[-1][0]}"
        out.items.append(Item("recent_messages", label, used, True, "most recent"))
    _left_out(out, store, thread_id, floor=floor, bounds=(first_seq, half_first), budget=budget)


def _left_out(
    out: Assembly,
    store: Store,
    thread_id: str,
    *,
    floor: int,
    bounds: tuple[int | None, int | None],
    budget: Budget,
) -> None:
    """Account for the messages not shown: summarized ones, and older ones that did not fit.
    Older ones that did not fit are to be compacted up to the newest half of the recent share
    (`bounds` is the first recent seq and the first seq of that half)."""
    first_seq, half_first = bounds
    if first_seq is None:
        return
    row = store.conn.execute(
        "SELECT COUNT(*), MIN(seq), MAX(seq) FROM messages WHERE thread_id = ? AND seq > ?"
        " AND seq < ?",
        (thread_id, floor, first_seq),
    ).fetchone()
    unsummarized, low, high = int(row[0]), row[1], row[2]
    if floor:
        summarized = store.conn.execute(
            "SELECT COUNT(*) FROM messages WHERE thread_id = ? AND seq <= ?", (thread_id, floor)
        ).fetchone()[0]
        out.items.append(
            Item("left_out", f"{summarized} messages up to #{floor}", 0, False, "in the summary")
        )
        out.left_out_messages += int(summarized)
    if unsummarized:
        out.items.append(
            Item(
                "left_out",
                f"{unsummarized} messages #{low}-#{high}",
                0,
                False,
                f"over the recent share of {budget.recent} tokens",
            )
        )
        out.left_out_messages += unsummarized
        keep_from = half_first if half_first is not None else int(high) + 1
        out.compaction = CompactionPlan(int(low), max(int(high), keep_from - 1))


def _older(
    out: Assembly,
    store: Store,
    thread_id: str,
    *,
    text: str,
    budget: Budget,
    counter: TokenCounter,
) -> dict[str, Any] | None:
    """Older messages (before the recent ones) that match the new message's words."""
    first = out.first_recent_seq
    words = fts_query(text)
    if first is None or words is None:
        return None
    query = " ".join(w.strip('"') for w in words.split(" OR "))
    hits = store.search_messages(
        query,
        thread_id=thread_id,
        before_seq=first,
        order="relevance",
        any_term=True,
        limit=OLDER_MATCHES,
    )
    lines: list[str] = []
    room = budget.older
    for hit in hits:
        line = f"#{hit.seq} {hit.role}: {hit.content}"
        tokens = counter.count(line)
        if tokens > room:
            line = f"#{hit.seq} {hit.role}: {hit.snippet}"
            tokens = counter.count(line)
        fits = tokens <= room
        reason = "matches the new message" if fits else "over the older-messages share"
        out.items.append(Item("older_message", f"#{hit.seq}", tokens, fits, reason, hit.message_id))
        if fits:
            room -= tokens
            out.used += tokens
            lines.append(line)
    if not lines:
        return None
    return _system(
        "Earlier messages of this thread that match the new message:\n"
        + mark_data("history", "\n".join(lines))
    )
