"""Graph state: only the current turn. The conversation of record lives in the store.

Every field declares its reducer. `scratch` appends within a turn and is reset by persist, so a
finished turn leaves nothing behind in the checkpoint however long the thread grows.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

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


class _TurnKeys(TypedDict):
    thread_id: str
    turn_id: str
    text: str


class TurnState(_TurnKeys, total=False):
    direct: bool
    context: list[dict[str, Any]]
    scratch: Annotated[list[dict[str, Any]], append_or_reset]
    pending: list[dict[str, Any]]
    question: dict[str, Any] | None
    route: str
    answer: str | None
    # Subagents: who this turn's agent is (None on the author's own thread) and how many
    # planner steps it took; the dispatch node's current plan call, plan and phase.
    agent: dict[str, Any] | None
    steps: int
    incomplete: bool
    plan_call: dict[str, Any] | None
    dispatching: Annotated[str | None, last_value]
    dispatch_phase: Annotated[str | None, last_value]


class SubagentInput(TypedDict):
    """What `Send` hands the subagent node: one task of one plan."""

    thread_id: str
    plan_id: str
    task_id: str
    depth: int
