"""Graph state: only the current turn. The conversation of record lives in the store.

Every field declares its reducer. `scratch` appends within a turn and is reset by persist, so a
finished turn leaves nothing behind in the checkpoint however long the thread grows.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict, get_args

RESET: list[dict[str, Any]] = [{"__reset__": True}]


def append_or_reset(
    left: list[dict[str, Any]], right: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Append `right` to `left`; a `RESET` update empties the list instead."""
    if right and right[0].get("__reset__"):
        return list(right[1:])
    return [*left, *right]


def last_value(left: Any, right: Any) -> Any:
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


class _TurnKeys(TypedDict):
    thread_id: Annotated[str, last_value]
    turn_id: Annotated[str, last_value]
    text: Annotated[str, last_value]


class TurnState(_TurnKeys, total=False):
    direct: Annotated[bool, last_value]
    context: Annotated[list[dict[str, Any]], last_value]
    scratch: Annotated[list[dict[str, Any]], append_or_reset]
    pending: Annotated[list[dict[str, Any]], last_value]
    question: Annotated[dict[str, Any] | None, last_value]
    route: Annotated[Route, last_value]
    answer: Annotated[str | None, last_value]
    # Subagents: who this turn's agent is (None on the author's own thread) and how many
    # planner steps it took; the dispatch node's current plan call, plan and phase.
    agent: Annotated[dict[str, Any] | None, last_value]
    steps: Annotated[int, last_value]
    incomplete: Annotated[bool, last_value]
    plan_call: Annotated[dict[str, Any] | None, last_value]
    dispatching: Annotated[str | None, last_value]
    dispatch_phase: Annotated[str | None, last_value]
    # Memory: writes the planner staged (persist flushes them, then resets), and the turn's
    # model usage (planner steps and compaction), summed.
    memory_writes: Annotated[list[dict[str, Any]], append_or_reset]
    usage: Annotated[dict[str, int], add_usage]
    # What the context node did for a direct command that asked it (`/compact`), in a line.
    notice: Annotated[str | None, last_value]


class SubagentInput(TypedDict):
    """What `Send` hands the subagent node: one task of one plan."""

    thread_id: str
    plan_id: str
    task_id: str
    depth: int
