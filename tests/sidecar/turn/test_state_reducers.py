"""Graph state declares how every key is merged, and routes are typed values."""

from __future__ import annotations

import typing

from sidecar.turn.state import ROUTES, TurnState


def test_every_state_key_declares_its_reducer() -> None:
    hints = typing.get_type_hints(TurnState, include_extras=True)
    missing = [
        key
        for key, hint in hints.items()
        if typing.get_origin(hint) is not typing.Annotated
        or not any(callable(extra) for extra in hint.__metadata__)
    ]
    assert missing == []


def test_routes_are_the_declared_literal_values() -> None:
    hints = typing.get_type_hints(TurnState, include_extras=True)
    route = typing.get_args(hints["route"])[0]
    assert set(typing.get_args(route)) == ROUTES
    assert {"tool", "dispatch", "interrupt", "persist"} <= ROUTES
