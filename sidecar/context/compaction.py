"""Compaction of a thread's older messages into a summary that names the range it covers.

The messages of the range are read newest first until the request's share of the budget is
full; the summary covers exactly the messages it read (an earlier summary it continues is merged
in, so the range then starts where that one started). Memories the model lists first (the
pre-compaction flush) are saved in their tiers, each with the message it most likely came from
as its source. The messages themselves stay in the database, searchable.

The flush writes its memories at once, not staged for persist like the planner's writes, on
purpose. Staging keeps a failed or cancelled turn from leaving half of what *that turn* meant
to save; the flush saves nothing of the running turn: its facts come from messages of turns
that already ended, and they go with the summary written just before them, which takes those
messages out of the context for good (the next turn does not compact them again). Staged until
the turn's end, they would be lost with a cancelled or failed turn while the summary stayed:
the half state staging exists to prevent. Should the process die between the summary and the
flush, its memories are missing but nothing is lost: the messages stay searchable.

The transcript holds tool results (files, other agents' results, ...) when the range has some:
the flush's memories then have provenance `agent_after_untrusted`, and, since nobody can be
asked in the middle of assembling a context, a fact meant for the account tier (every
workspace) is saved in the workspace tier instead, for the author to review and move
(`sidecar.context.consent` asks about such writes when a turn makes them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from mcp_servers.memory import Memory, MemoryRefusal, MemoryStore, Provenance, Scope
from sidecar.context.assemble import CompactionPlan
from sidecar.context.budget import ContextBudget
from sidecar.context.tokens import TokenCounter
from sidecar.llm.compaction import compact
from sidecar.llm.types import Planner, PlannerError
from sidecar.store import Store
from sidecar.store.context import ContextRepo, SummaryRecord

log = logging.getLogger(__name__)
PAGE = 200


@dataclass(slots=True)
class CompactionOutcome:
    summary: SummaryRecord | None = None
    saved: list[Memory] = field(default_factory=list[Memory])
    usage: dict[str, int] = field(default_factory=dict[str, int])
    error: str | None = None


NOTHING_TO_COMPACT = "Nothing to compact yet"
"""The outcome's `error` when no message is old enough to summarize: not a failure, and said
to the author as it is."""


@dataclass(frozen=True, slots=True)
class _Transcript:
    text: str
    first_seq: int
    first_id: str
    last_id: str
    count: int
    untrusted: bool
    """It holds a tool's result: content the author did not write."""


def _transcript(
    store: Store, thread_id: str, plan: CompactionPlan, room: int, counter: TokenCounter
) -> _Transcript:
    """The range's messages as text, newest first until `room` is full."""
    lines: list[str] = []
    untrusted = False
    used = 0
    first_seq, first_id, last_id, count = plan.to_seq + 1, "", "", 0
    before = plan.to_seq + 1
    while True:
        page = store.messages_page(thread_id, before_seq=before, limit=PAGE)
        stop = False
        for seq, record in reversed(page.messages):
            if seq < plan.from_seq:
                stop = True
                break
            line = f"#{seq} {record.role}: {record.content}" if record.content else ""
            tokens = counter.message(line) if line else 0
            if used + tokens > room and count:
                stop = True
                break
            used += tokens
            if line:
                lines.append(line)
                untrusted = untrusted or record.role == "tool"
            last_id = last_id or record.id
            first_seq, first_id, count = seq, record.id, count + 1
        if stop or not page.has_older or not page.messages:
            break
        before = page.messages[0][0]
    lines.reverse()
    return _Transcript("\n".join(lines), first_seq, first_id, last_id, count, untrusted)


async def run_compaction(
    planner: Planner,
    store: Store,
    contexts: ContextRepo,
    memory: MemoryStore,
    *,
    thread_id: str,
    scope: Scope,
    plan: CompactionPlan,
    budget: ContextBudget,
    counter: TokenCounter,
) -> CompactionOutcome:
    """Summarize `plan`'s range (and flush memories first); on a model failure nothing changes
    and the outcome says why."""
    previous = contexts.latest_summary(thread_id)
    room = budget.share(0.6) - (counter.count(previous.text) if previous else 0)
    read = _transcript(store, thread_id, plan, max(room, 256), counter)
    if not read.count:
        return CompactionOutcome(error=NOTHING_TO_COMPACT)
    words = max(50, int(budget.summary * 0.6))
    try:
        reply = await compact(planner, read.text, previous.text if previous else None, words=words)
    except PlannerError as exc:
        log.warning("compaction of thread %s failed: %s", thread_id, exc)
        return CompactionOutcome(error=f"the model failed ({exc.code})")
    if not reply.summary.strip():
        return CompactionOutcome(usage=reply.usage, error="the model wrote no summary")
    contiguous = previous is not None and previous.to_seq + 1 >= plan.from_seq
    from_seq, from_id = read.first_seq, read.first_id
    messages = read.count
    if contiguous and previous is not None and read.first_seq == plan.from_seq:
        from_seq, from_id = previous.from_seq, previous.from_id
        messages += previous.messages
    summary = contexts.add_summary(
        thread_id,
        from_seq=from_seq,
        to_seq=plan.to_seq,
        from_id=from_id,
        to_id=read.last_id,
        messages=messages,
        text=reply.summary.strip(),
    )
    saved = _flush(
        store,
        memory,
        thread_id=thread_id,
        scope=scope,
        facts=reply.memories,
        span=(read.first_seq, plan.to_seq),
        untrusted=read.untrusted,
    )
    return CompactionOutcome(summary=summary, saved=saved, usage=reply.usage)


def _flush(
    store: Store,
    memory: MemoryStore,
    *,
    thread_id: str,
    scope: Scope,
    facts: tuple[tuple[str, str], ...],
    span: tuple[int, int],
    untrusted: bool,
) -> list[Memory]:
    saved: list[Memory] = []
    provenance: Provenance = "agent_after_untrusted" if untrusted else "agent_from_author"
    for asked, fact in facts:
        tier = "workspace" if untrusted and asked == "account" else asked
        hits = store.search_messages(
            fact,
            thread_id=thread_id,
            before_seq=span[1] + 1,
            order="relevance",
            any_term=True,
            limit=1,
        )
        source = hits[0].message_id if hits else None
        if source is None:
            source = store.last_message_id_through(thread_id, span[1])
        try:
            saved.append(
                memory.write(scope, tier, fact, provenance=provenance, source_message=source)
            )
        except MemoryRefusal as exc:
            log.info("compaction flush skipped a memory: %s", exc)
    return saved
