"""Graph state: only the current turn. The conversation of record lives in the store.

Every field declares its reducer. `scratch` appends within a turn and is reset by persist, so a
finished turn leaves nothing behind in the checkpoint however long the thread grows.

The entries are `TypedDict`s: pyright checks every key where one is built or read, and a
checkpoint holds exactly the JSON-shaped dicts an earlier release wrote (a turn paused on a
question across an upgrade resumes unchanged).
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired, TypedDict, TypeVar, get_args

from sidecar.json_value import JsonObject

Role = Literal["system", "user", "assistant", "tool"]


class ToolCallEntry(TypedDict):
    """A tool call the model asked for: its provider call id, `server__tool` name, arguments."""

    id: str
    name: str
    arguments: JsonObject


class ChatEntry(TypedDict):
    """One entry of the turn's conversation as the model sees it. `tool` entries carry
    `tool_call_id` and `name`; `assistant` entries may carry `tool_calls`; an author's message
    steered into a running turn carries its `queued_id`."""

    role: Role
    content: str
    tool_calls: NotRequired[list[ToolCallEntry]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]
    queued_id: NotRequired[str]


class MemoryScopeEntry(TypedDict):
    thread: str | None
    channel: str | None
    workspace: str | None


MemoryProvenance = Literal["author", "agent_from_author", "agent_after_untrusted"]
"""Who a staged write comes from (`mcp_servers.memory.Provenance`)."""


class StagedWrite(TypedDict):
    """A memory write the planner asked for, applied by persist when the turn ends.

    `provenance` is decided when it is staged (a write staged by an earlier release has none:
    persist then derives it from the turn); `approved` marks a change the author said yes to
    (`sidecar.context.consent`)."""

    op: str
    call_id: str
    key: str
    arguments: JsonObject
    scope: MemoryScopeEntry
    source_message: str | None
    provenance: NotRequired[MemoryProvenance]
    approved: NotRequired[bool]


class AgentIdentity(TypedDict):
    """Who runs this turn when it is a subagent's (None on the author's own thread)."""

    profile: str
    depth: int
    task_id: str
    plan_id: str
    parent_thread_id: str


class Reset(TypedDict):
    """An update that empties an append-only list instead of appending (see `RESET`)."""

    __reset__: Literal[True]


T = TypeVar("T")

RESET: list[Reset] = [{"__reset__": True}]


def append_or_reset(left: list[T], right: list[T] | list[Reset]) -> list[T]:
    """Append `right` to `left`; a `RESET` update empties the list instead."""
    if right and right[0] == RESET[0]:
        return list(right[1:])  # pyright: ignore[reportReturnType] (what follows the marker is T)
    return [*left, *right]  # pyright: ignore[reportReturnType] (right is list[T] here)


def last_value(left: T, right: T) -> T:
    """Last write wins, also when several parallel subagents write in one step."""
    del left
    return right


def add_usage(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    """Sum token counts within a turn; an update carrying `__reset__` starts from it instead."""
    if right.get("__reset__"):
        return {k: v for k, v in right.items() if k != "__reset__"}
    summed = dict(left)
    for key, value in right.items():
        summed[key] = summed.get(key, 0) + value
    return summed


Route = Literal["tool", "dispatch", "interrupt", "persist", "planner", "end"]
"""Where the graph goes after the node that set it (the planner's and the nodes' decision)."""
ROUTES: frozenset[str] = frozenset(get_args(Route))

DispatchPhase = Literal["plan", "start", "run", "join"]
"""The dispatch node's phase: a plan to store, to start, running, or to join."""


class _TurnKeys(TypedDict):
    thread_id: Annotated[str, last_value]
    turn_id: Annotated[str, last_value]
    text: Annotated[str, last_value]


class TurnState(_TurnKeys, total=False):
    direct: Annotated[bool, last_value]
    context: Annotated[list[ChatEntry], last_value]
    scratch: Annotated[list[ChatEntry], append_or_reset]
    pending: Annotated[list[ToolCallEntry], last_value]
    question: Annotated[ToolCallEntry | None, last_value]
    route: Annotated[Route, last_value]
    answer: Annotated[str | None, last_value]
    # Subagents: who this turn's agent is (None on the author's own thread) and how many
    # planner steps it took; the dispatch node's current plan call, plan and phase.
    agent: Annotated[AgentIdentity | None, last_value]
    steps: Annotated[int, last_value]
    incomplete: Annotated[bool, last_value]
    plan_call: Annotated[ToolCallEntry | None, last_value]
    dispatching: Annotated[str | None, last_value]
    dispatch_phase: Annotated[DispatchPhase | None, last_value]
    # Memory: writes the planner staged (persist flushes them, then resets), and the turn's
    # model usage (planner steps and compaction), summed.
    memory_writes: Annotated[list[StagedWrite], append_or_reset]
    usage: Annotated[dict[str, int], add_usage]
    # Why the turn counts as having read untrusted content (a tool's output, a file, the web,
    # another agent's result), in a line; None or missing: it has not. Set once, by the node
    # that let such content in; the context node starts each turn afresh. A checkpoint of an
    # earlier release has no such key: `sidecar.context.taint.turn_untrusted` then reads the
    # turn's scratch.
    untrusted: Annotated[str | None, last_value]
    # What the context node did for a direct command that asked it (`/compact`), in a line.
    notice: Annotated[str | None, last_value]
    # The model's input window in tokens, as the context node took it for the turn's budget:
    # the planner's tool choice takes a share of it (`sidecar.context.tool_search`).
    window: Annotated[int, last_value]


class SubagentInput(TypedDict):
    """What `Send` hands the subagent node: one task of one plan."""

    thread_id: str
    plan_id: str
    task_id: str
    depth: int
