"""context: assemble the turn's context within the model's token budget.

Pinned items first (identity files, pinned memories), then memories that match the new message,
the thread's summary, the recent messages and older messages that match. When the recent part
outgrows its share, the older part is compacted by the model first (after a memory flush); with
no model, or compaction turned off for the thread, the most recent messages that fit are kept.
A `context` event says what went in, what was left out and why, with token counts.

Earlier turns contribute their author and assistant text only; their tool traffic stays in the
transcript. A subagent's turn sees its own sub-thread only (no identity files, no memories).

Each turn starts with the mark of untrusted content afresh (`sidecar.context.taint`): set at
once for a subagent's turn, a plan's report delivered as a new turn, or a context that carries
untrusted content.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from mcp_servers.memory import Memory, Scope
from sidecar.context.assemble import Assembly, assemble
from sidecar.context.budget import ContextBudget, budget_for
from sidecar.context.compaction import NOTHING_TO_COMPACT, CompactionOutcome, run_compaction
from sidecar.context.identity import Identity, read_identity
from sidecar.context.parts import MemoryDeps
from sidecar.context.skills import offer_skills
from sidecar.context.staging import scope_for
from sidecar.context.taint import ANNOUNCED, SUBAGENT, is_announcement
from sidecar.context.tokens import TokenCounter, load_counter
from sidecar.context.tool_search import ToolChoice
from sidecar.context.vectors import similar_memories
from sidecar.graph.commands import is_compact
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.planner import request_tools
from sidecar.graph.nodes.tool import agent_profile
from sidecar.llm.framing import framing_for
from sidecar.llm.types import Planner
from sidecar.store import PlanRecord
from sidecar.store.records import question_id
from sidecar.turn.events import (
    CompactionReport,
    ContextReported,
    MemoryAction,
    MemoryChanged,
    emit,
)
from sidecar.turn.state import RESET, ChatEntry, TurnState

log = logging.getLogger(__name__)
IDENTITY_DEADLINE_S = 5.0
EMBED_DEADLINE_S = 10.0
SIMILAR_MEMORIES = 8
WINDOW_DEADLINE_S = 20.0


def make_context(deps: GraphDeps):
    async def context(state: TurnState) -> dict[str, Any]:
        reset: dict[str, Any] = {
            "scratch": RESET,
            "pending": [],
            "answer": None,
            "memory_writes": RESET,
            "notice": None,
            "untrusted": None,
        }
        if state.get("direct") and is_compact(state.get("text") or ""):
            _, usage, notice, _, _ = await _assembled(deps, state, compact=True)
            return {**reset, "context": [], "usage": {"__reset__": 1, **usage}, "notice": notice}
        if state.get("direct"):
            return {**reset, "context": [], "usage": {"__reset__": 1}}
        turns, usage, _, carried, window = await _assembled(deps, state)
        note = _open_plan_note(deps, state["thread_id"])
        return {
            **reset,
            "context": turns + ([note] if note else []),
            "usage": {"__reset__": 1, **usage},
            "untrusted": _untrusted_at_start(state, carried),
            "window": window,
        }

    return context


def _untrusted_at_start(state: TurnState, carried: str | None) -> str | None:
    """Why the turn has read untrusted content before its first step, or None."""
    if state.get("agent"):
        return SUBAGENT
    if is_announcement(state.get("text") or ""):
        return ANNOUNCED
    return carried


async def _assembled(
    deps: GraphDeps, state: TurnState, *, compact: bool = False
) -> tuple[list[ChatEntry], dict[str, int], str, str | None, int]:
    """The context's turns, the compaction's model usage, what compaction did in a line
    (`compact`: compact now, whatever the budget says), why the context carries untrusted
    content (None: it does not), and the model's window in tokens."""
    mem = deps.memory
    thread_id = state["thread_id"]
    is_agent = bool(state.get("agent"))
    planner = deps.planner()
    model = _model_name(planner)
    counter, window = await _model_facts(mem, model)
    budget = budget_for(window)
    settings = mem.contexts.settings(thread_id)
    scope = scope_for(thread_id, settings.channel, deps.workspace())
    identity = Identity() if is_agent else await _identity(deps.workspace(), budget, counter)
    sources = mem.sources(deps.store)

    similar = [] if is_agent else await _similar(deps, mem, scope, state.get("text") or "")

    def build() -> Assembly:
        return assemble(
            sources,
            thread_id=thread_id,
            scope=scope,
            text=state.get("text") or "",
            identity=identity,
            budget=budget,
            counter=counter,
            with_memory=not is_agent,
            similar=similar,
            framing=framing_for(planner),
        )

    assembly = build()
    outcome: CompactionOutcome | None = None
    why_not: str | None = None
    wanted = assembly.compaction is not None or settings.compact_next or compact
    if wanted and not is_agent:
        why_not = _why_not_compact(planner, "on" if compact else settings.compaction)
        if why_not is None and planner is not None:
            outcome = await _compact(
                deps,
                mem,
                planner,
                assembly=assembly,
                scope=scope,
                budget=budget,
                counter=counter,
                state=state,
            )
            if settings.compact_next:
                mem.contexts.set_compaction(thread_id, compact_next=False)
            if outcome.summary is not None:
                assembly = build()
    profile = agent_profile(deps, state)
    await offer_skills(
        assembly,
        workspace=deps.workspace(),
        data_dir=deps.data_dir,
        budget=budget,
        counter=counter,
        allows=profile.allows_skill if profile is not None else None,
    )
    question = question_id(state["turn_id"]) if state.get("turn_id") else None
    _report(
        assembly,
        budget,
        counter=counter,
        model=model,
        outcome=outcome,
        why_not=why_not,
        message_id=question if question and deps.store.has_message(question) else None,
        tools=request_tools(deps, state, budget.window),
    )
    notice = _notice(outcome, why_not)
    usage = dict(outcome.usage) if outcome else {}
    return assembly.turns, usage, notice, assembly.untrusted, budget.window


def _notice(outcome: CompactionOutcome | None, why_not: str | None) -> str:
    """What compaction did, for the author (the answer of `/compact`)."""
    if outcome is not None and outcome.summary is not None:
        summary = outcome.summary
        saved = len(outcome.saved)
        memories = f"; {saved} memor{'y' if saved == 1 else 'ies'} saved first" if saved else ""
        return (
            f"Summarized {summary.messages} earlier messages (#{summary.from_seq} to "
            f"#{summary.to_seq}){memories}. They stay in the thread and in search."
        )
    if outcome is not None and outcome.error == NOTHING_TO_COMPACT:
        return f"{NOTHING_TO_COMPACT}: every message is still recent enough to be read whole."
    if outcome is not None:
        return f"Nothing was summarized: {outcome.error}."
    if why_not is not None:
        return f"Nothing was summarized: {why_not}."
    return "Nothing was summarized."


async def _similar(deps: GraphDeps, mem: MemoryDeps, scope: Scope, text: str) -> list[Memory]:
    """Memories close in meaning to the new message, when an embedding model is configured; a
    failed or slow embedding request costs only this (the turn goes on with word matches)."""
    embedder = deps.embedder()
    if embedder is None or not text.strip():
        return []
    try:
        async with asyncio.timeout(EMBED_DEADLINE_S):
            found = await similar_memories(
                mem.vectors(), embedder, mem.memory, scope, text, limit=SIMILAR_MEMORIES
            )
    except Exception as exc:  # never required: say so in the log and go on
        log.warning("finding memories by meaning failed (%s): %s", embedder.model, exc)
        return []
    return [memory for memory, _ in found]


def _why_not_compact(planner: Planner | None, mode: str) -> str | None:
    if mode == "off":
        return "compaction is off for this thread: the most recent messages that fit are kept"
    if planner is None:
        return "no model is configured: the most recent messages that fit are kept"
    return None


async def _compact(
    deps: GraphDeps,
    mem: MemoryDeps,
    planner: Planner,
    *,
    assembly: Assembly,
    scope: Scope,
    budget: ContextBudget,
    counter: TokenCounter,
    state: TurnState,
) -> CompactionOutcome:
    from sidecar.context.assemble import CompactionPlan

    plan = assembly.compaction
    if plan is None:  # compact now: everything before the recent messages
        first = assembly.first_recent_seq or 0
        plan = CompactionPlan(1, first - 1)
        latest = mem.contexts.latest_summary(state["thread_id"])
        if latest is not None:
            plan = CompactionPlan(latest.to_seq + 1, first - 1)
        if plan.to_seq < plan.from_seq:
            return CompactionOutcome(error=NOTHING_TO_COMPACT)  # nothing older than the recent
    outcome = await run_compaction(
        planner,
        deps.store,
        mem.contexts,
        mem.memory,
        thread_id=state["thread_id"],
        scope=scope,
        plan=plan,
        budget=budget,
        counter=counter,
    )
    for saved in outcome.saved:
        emit_memory("saved", saved)
    return outcome


def emit_memory(
    action: MemoryAction, memory: Memory | None, key: str = "", error: str | None = None
) -> None:
    """A memory saved, changed or forgotten (the transcript shows a chip for it)."""
    emit(MemoryChanged(action, memory.key if memory is not None else key, memory, error))


def _report(
    assembly: Assembly,
    budget: ContextBudget,
    *,
    counter: TokenCounter,
    model: str | None,
    outcome: CompactionOutcome | None,
    why_not: str | None,
    message_id: str | None,
    tools: ToolChoice,
) -> None:
    compaction: CompactionReport | None = None
    if outcome is not None and outcome.summary is not None:
        summary = outcome.summary
        compaction = CompactionReport(
            performed=True,
            from_seq=summary.from_seq,
            to_seq=summary.to_seq,
            messages=summary.messages,
            memories_saved=len(outcome.saved),
            reason="the recent messages outgrew their share of the budget",
        )
    elif outcome is not None and outcome.error == NOTHING_TO_COMPACT:
        compaction = CompactionReport(False, NOTHING_TO_COMPACT)
    elif outcome is not None:
        compaction = CompactionReport(False, f"summarizing failed: {outcome.error}")
    elif why_not is not None:
        compaction = CompactionReport(False, why_not)
    emit(
        ContextReported(
            model=model,
            window=budget.window,
            budget=budget.input,
            used=assembly.used,
            tokenizer=counter.name,
            items=tuple(assembly.items),
            left_out_messages=assembly.left_out_messages,
            warnings=tuple(assembly.warnings),
            compaction=compaction,
            message_id=message_id,
            tools_sent=len(tools.tools),
            tools_deferred=len(tools.deferred),
        )
    )


def _model_name(planner: Planner | None) -> str | None:
    config = getattr(planner, "config", None)
    model = getattr(config, "model", None)
    return model if isinstance(model, str) else None


_WINDOWS: dict[str, int | None] = {}


async def _model_facts(mem: MemoryDeps, model: str | None) -> tuple[TokenCounter, int | None]:
    """The model's token counter and window (loaded off the event loop, once per model)."""
    counter = await asyncio.to_thread(load_counter, model)
    configured = mem.window or _configured_window()
    if configured is not None or model is None:
        return counter, configured
    if model not in _WINDOWS:
        from sidecar.llm.window import model_window

        try:
            _WINDOWS[model] = await asyncio.wait_for(
                asyncio.to_thread(model_window, model), WINDOW_DEADLINE_S
            )
        except TimeoutError:
            return counter, None
    return counter, _WINDOWS[model]


def _configured_window() -> int | None:
    raw = os.environ.get("ATRIUM_CONTEXT_TOKENS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


async def _identity(workspace: Path, budget: ContextBudget, counter: TokenCounter) -> Identity:
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(read_identity, workspace, budget.identity_file, counter.count),
            IDENTITY_DEADLINE_S,
        )
    except TimeoutError:
        return Identity(warnings=("The identity files took too long to read; skipped this turn.",))


_OPEN_PLAN_STATES = frozenset({"failed", "aborted"})
_LIVE_PLAN_STATES = frozenset({"running", "paused"})


def _live_plans_note(deps: GraphDeps, plans: list[PlanRecord]) -> ChatEntry:
    lines: list[str] = []
    for plan in plans:
        where = "is running in the background" if plan.status == "running" else "is paused"
        lines.append(f"Plan {plan.id} (version {plan.version}, goal: {plan.goal}) {where}:")
        for task in deps.store.tasks(plan.id):
            lines.append(f"- {task.id} ({task.title}, profile {task.profile}): {task.status}")
    lines.append(
        "If the author's message changes what such a plan should do, propose a revision: "
        "atrium__plan with its plan_id (its work stops while the author decides; completed "
        "tasks are kept). To pass a word to one task, atrium__task_message; to stop one, "
        "atrium__task_cancel."
    )
    return {"role": "system", "content": "\n".join(lines)}


def _open_plan_note(deps: GraphDeps, thread_id: str) -> ChatEntry | None:
    """The thread's plans still at work (running or paused), or its latest if it ended
    unfinished: the author's new message is the trigger on which the planner may revise one
    (completed tasks stay as they are; a live plan's work stops while the author decides)."""
    plans = deps.store.plans(thread_id)
    live = [p for p in plans if p.status in _LIVE_PLAN_STATES]
    if live:
        return _live_plans_note(deps, live)
    if not plans or plans[-1].status not in _OPEN_PLAN_STATES:
        return None
    plan = plans[-1]
    lines = [f"Plan {plan.id} (version {plan.version}, goal: {plan.goal}) ended {plan.status}:"]
    for task in deps.store.tasks(plan.id):
        detail = f": {task.error}" if task.error else ""
        lines.append(f"- {task.id} ({task.title}, profile {task.profile}): {task.status}{detail}")
    lines.append(
        f"If the author's message asks to go on, revise it with atrium__plan and "
        f"plan_id={plan.id!r}; completed tasks are kept and cannot change."
    )
    return {"role": "system", "content": "\n".join(lines)}
