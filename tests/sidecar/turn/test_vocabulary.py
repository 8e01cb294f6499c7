"""The turn's vocabulary is typed all the way down: no `Any` (and so no `dict[str, Any]`) in
the graph state, the event union or the question union, so a renamed field fails type checks
instead of being dropped at run time."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, get_args, get_origin, get_type_hints

import pytest

from mcp_servers.memory import Memory
from sidecar.turn import events, questions, state


class _Json:
    """Stands for `sidecar.json_value.JsonValue` (a recursive alias of JSON's own types, no
    `Any`) while the hints are resolved."""


_NAMES = {"JsonValue": _Json, "JsonObject": dict[str, _Json], "Memory": Memory}


def _leaves(tp: object, seen: set[int]) -> typing.Iterator[object]:
    """Every type reachable from `tp` (type arguments, TypedDict values, dataclass fields)."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    yield tp
    for arg in get_args(tp):
        yield from _leaves(arg, seen)
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return
    target = tp if isinstance(tp, type) else None
    if target is None:
        return
    if typing.is_typeddict(target):
        for hint in get_type_hints(target, localns=_NAMES, include_extras=True).values():
            yield from _leaves(hint, seen)
    elif dataclasses.is_dataclass(target):
        for hint in get_type_hints(target, localns=_NAMES).values():
            yield from _leaves(hint, seen)


def _union_members(alias: object) -> tuple[object, ...]:
    return get_args(alias)


ROOTS: dict[str, object] = {
    "TurnState": state.TurnState,
    "SubagentInput": state.SubagentInput,
    **{f"event {t.__name__}": t for t in _union_members(events.TurnEvent)},
    **{f"activity {t.__name__}": t for t in _union_members(events.SubagentActivity)},
    **{f"question {t.__name__}": t for t in _union_members(questions.Question)},
}


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_no_any_in_the_turns_vocabulary(name: str) -> None:
    found = [leaf for leaf in _leaves(ROOTS[name], set()) if leaf is Any]
    assert not found, f"{name} reaches typing.Any"


def test_the_unions_hold_what_the_turn_emits_and_asks() -> None:
    emitted = {t.__name__ for t in _union_members(events.TurnEvent)}
    assert {"TokenStreamed", "MessageWritten", "ToolCalled", "SubagentRelayed"} <= emitted
    kinds = {get_type_hints(q, localns=_NAMES)["kind"] for q in _union_members(questions.Question)}
    assert {get_args(k)[0] for k in kinds} == {
        "approval",
        "question",
        "plan_approval",
        "escalation",
        "changeset",
        "form",
        "sampling",
    }


def test_the_check_finds_any_where_it_is() -> None:
    class Loose(typing.TypedDict):
        payload: dict[str, Any]

    assert any(leaf is Any for leaf in _leaves(Loose, set()))
