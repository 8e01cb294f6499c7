"""Every declared method has exactly one handler, typed as the method table says."""

from __future__ import annotations

import typing

import pytest

from sidecar.handlers.registry import Registry
from sidecar.handlers.services import Services
from sidecar.handlers.table import load_all
from sidecar.protocol import METHODS, NOTIFICATIONS, Empty


def test_every_declared_method_has_a_handler_after_load_all() -> None:
    assert set(load_all().handlers) == set(METHODS)


def test_load_all_is_idempotent() -> None:
    first = dict(load_all().handlers)
    assert load_all().handlers == first


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_handler_is_typed_with_the_declared_params_and_result(name: str) -> None:
    handler = load_all().handlers[name]
    hints = typing.get_type_hints(handler)
    spec = METHODS[name]
    params = [v for k, v in hints.items() if k != "return"]
    assert params == [Services, spec.params]
    assert hints["return"] is spec.result


def test_method_names_are_area_slash_verb_or_lifecycle_words() -> None:
    lifecycle = {"initialize", "ping", "shutdown"}
    for name in [*METHODS, *NOTIFICATIONS]:
        assert name in lifecycle or name.count("/") == 1, name
    assert not set(METHODS) & set(NOTIFICATIONS)


def test_registering_an_undeclared_method_raises_key_error() -> None:
    with pytest.raises(KeyError):
        Registry().method("thread/explode")


def test_registering_a_method_twice_raises_value_error() -> None:
    registry = Registry()

    async def first(svc: Services, params: Empty) -> Empty:
        return params

    async def second(svc: Services, params: Empty) -> Empty:
        return params

    registry.method("ping")(first)
    with pytest.raises(ValueError):
        registry.method("ping")(second)
    assert registry.handlers == {"ping": first}


def test_bind_gives_each_handler_its_declared_params_model() -> None:
    bound = load_all().bind(typing.cast(Services, object()))
    assert {name: b.params for name, b in bound.items()} == {
        name: spec.params for name, spec in METHODS.items()
    }
