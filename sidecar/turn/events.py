"""What a turn emits while it runs: one union of typed events.

Nodes, plans and the context emit these on LangGraph's custom stream (`emit`); the runtime maps
each to its wire event in one `match` (`sidecar.runtime.wire.graph_event`). A field renamed here
fails type checks at every place that builds or reads the event, not at run time.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from sidecar.json_value import JsonValue
from sidecar.store import MessageRecord, PlanRecord, TaskRecord
from sidecar.store.budgets import Budget

if TYPE_CHECKING:
    # The memory package imports LangGraph's store: named for the type only (start-up cost).
    from mcp_servers.memory import Memory


@dataclass(frozen=True, slots=True)
class NodeStarted:
    node: str


@dataclass(frozen=True, slots=True)
class NodeFinished:
    node: str


@dataclass(frozen=True, slots=True)
class TokenStreamed:
    """A piece of the answer as it streams (the hot path: coalesced by the runtime)."""

    text: str


@dataclass(frozen=True, slots=True)
class UsageCounted:
    """A model step's token counts; summed by whoever runs the turn, never sent."""

    usage: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class MessageWritten:
    """A message was added to the conversation of record."""

    message: MessageRecord


@dataclass(frozen=True, slots=True)
class ToolCalled:
    call_id: str
    server: str
    tool: str
    arguments: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    is_error: bool
    content: str


@dataclass(frozen=True, slots=True)
class ToolProgressed:
    """Progress of a running call (a strong agent's normalized events arrive as these)."""

    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class TaskChanged:
    """A task changed: status, attempt, activity, usage, stall badge or result."""

    task: TaskRecord


@dataclass(frozen=True, slots=True)
class PlanChanged:
    """A plan was proposed, approved, edited, replanned or ended; its tasks and budget as now."""

    plan: PlanRecord
    tasks: tuple[TaskRecord, ...]
    budget: Budget | None = None
    replaced: tuple[tuple[int, TaskRecord], ...] = ()
    """Tasks earlier versions had that a replan replaced (they ran or ended), by version."""


BudgetScope = Literal["thread", "plan"]
BudgetState = Literal["warned", "spent", "raised", "stopped", "cost_unknown"]


@dataclass(frozen=True, slots=True)
class BudgetReported:
    """A budget of the thread, or of one of its plans, changed state."""

    scope: BudgetScope
    state: BudgetState
    budget: Budget
    message: str
    plan_id: str | None = None


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One part of a turn's context and whether it went in (and why)."""

    kind: str
    label: str
    tokens: int
    included: bool
    reason: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class CompactionReport:
    performed: bool
    reason: str
    from_seq: int | None = None
    to_seq: int | None = None
    messages: int | None = None
    memories_saved: int = 0


@dataclass(frozen=True, slots=True)
class ContextReported:
    """What the agent saw this turn: every part, its tokens, what was left out and why."""

    window: int
    budget: int
    used: int
    tokenizer: str
    model: str | None = None
    items: tuple[ContextItem, ...] = ()
    left_out_messages: int = 0
    warnings: tuple[str, ...] = ()
    compaction: CompactionReport | None = None
    message_id: str | None = None
    # The tools the turn's first request carries, and those left out for `atrium__tool_search`
    # to find (`sidecar.context.tool_search`).
    tools_sent: int = 0
    tools_deferred: int = 0


MemoryAction = Literal["saved", "updated", "forgotten", "pinned", "unpinned", "failed"]


@dataclass(frozen=True, slots=True)
class MemoryChanged:
    """A memory saved, updated, pinned or forgotten during the turn (a chip in the transcript)."""

    action: MemoryAction
    key: str
    memory: Memory | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TurnUsageReported:
    """The turn's tokens and cost (planner steps and compaction), and the thread's totals."""

    prompt_tokens: int
    completion_tokens: int
    thread_prompt_tokens: int
    thread_completion_tokens: int
    model: str | None = None
    cost: float | None = None
    thread_cost: float | None = None


@dataclass(frozen=True, slots=True)
class TaskChecked:
    """A task's result was checked against its acceptance criteria."""

    attempt: int
    method: str
    verdict: str
    reasons: str
    criteria: str


@dataclass(frozen=True, slots=True)
class SubagentRelayed:
    """An event of a subagent's own run, nested under its task."""

    task_id: str
    event: SubagentActivity
    plan_id: str | None = None
    sub_thread_id: str | None = None


TurnEvent: TypeAlias = (
    NodeStarted
    | NodeFinished
    | TokenStreamed
    | UsageCounted
    | MessageWritten
    | ToolCalled
    | ToolProgressed
    | ToolFinished
    | TaskChanged
    | PlanChanged
    | BudgetReported
    | ContextReported
    | MemoryChanged
    | TurnUsageReported
    | SubagentRelayed
)
"""Everything a turn emits."""

SubagentActivity: TypeAlias = (
    NodeStarted
    | NodeFinished
    | TokenStreamed
    | MessageWritten
    | ToolCalled
    | ToolProgressed
    | ToolFinished
    | TaskChanged
    | PlanChanged
    | BudgetReported
    | ContextReported
    | MemoryChanged
    | TurnUsageReported
    | TaskChecked
    | SubagentRelayed
)
"""What a subagent's task reports under it: its own run's events (a nested subagent's among
them) and the checks of its result (a strong agent's normalized events arrive as
`ToolProgressed` of its agents call)."""


EventSink: TypeAlias = Callable[[TurnEvent], None]

_SINK: ContextVar[EventSink | None] = ContextVar("atrium_turn_events", default=None)


def emit(event: TurnEvent) -> None:
    """Send `event` to the sink of `events_to`, else on the running graph's custom stream."""
    sink = _SINK.get()
    if sink is None:
        sink = _graph_writer()()
    sink(event)


@contextmanager
def events_to(sink: EventSink) -> Generator[None]:
    """Send what is emitted in this task (and the tasks it starts) to `sink`: plans that run
    outside a graph run (in the background of their thread) report through it."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


@functools.cache
def _graph_writer() -> Callable[[], EventSink]:
    """LangGraph's stream-writer getter, imported on first use: naming events costs start-up
    no LangGraph import (`tests/sidecar/test_app_imports.py`)."""
    from langgraph.config import get_stream_writer

    return get_stream_writer


class Node(Protocol):
    """A graph node: takes the state, returns the update."""

    def __call__(self, state: Any) -> Awaitable[Mapping[str, Any]]: ...


def traced(name: str, fn: Node) -> Node:
    """Wrap a node so it reports `NodeStarted` / `NodeFinished`."""

    @functools.wraps(fn)
    async def wrapper(state: Any) -> Mapping[str, Any]:
        emit(NodeStarted(name))
        update = await fn(state)
        emit(NodeFinished(name))
        return update

    return wrapper
