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
