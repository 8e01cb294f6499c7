"""Every declared method has a name constant in the face, is declared in the module of its area
and has exactly one handler, in the handler module of its area, typed as the method table says."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from types import ModuleType

import pytest

import sidecar.protocol
from sidecar.handlers.registry import Registry
from sidecar.handlers.services import Services
from sidecar.handlers.table import load_all
from sidecar.protocol import METHODS, NOTIFICATIONS, Empty

AREAS: dict[str, str] = {
    "initialize": "lifecycle",
    "ping": "lifecycle",
    "shutdown": "lifecycle",
    "thread": "threads",
    "run": "runs",
    "tool": "tools",
    "settings": "settings",
    "server": "servers",
    "grant": "grants",
    "server_log": "features",
    "resource": "features",
    "prompt": "features",
    "profile": "plans",
    "plan": "plans",
    "task": "plans",
    "routine": "routines",
    "skills": "skills",
    "queue": "queue",
    "schedule": "schedules",
    "automation": "automation",
    "heartbeat": "heartbeat",
    "memory": "memory",
    "identity": "identity",
    "agents": "agents",
}
"""A method's prefix -> the module, in `sidecar/protocol` and in `sidecar/handlers` alike, that
declares and handles it. A new prefix gets its own module unless it is part of an area's concept."""


def area(method: str) -> str:
    return AREAS[method.partition("/")[0]]


def constant_name(method: str) -> str:
    return method.upper().replace("/", "_")


def declared_constants(module: ModuleType) -> dict[str, object]:
    """The names a module assigns at its top level (not the ones it imports), with their values."""
    tree = ast.parse(inspect.getsource(module))
    names = [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    return {name: getattr(module, name) for name in names}


def protocol_module(name: str) -> ModuleType:
    return importlib.import_module(f"sidecar.protocol.{name}")


@pytest.mark.parametrize("method", sorted([*METHODS, *NOTIFICATIONS]))
def test_each_wire_method_and_notification_has_its_name_constant_in_the_face(method: str) -> None:
    name = constant_name(method)
    assert name in sidecar.protocol.__all__
    assert getattr(sidecar.protocol, name) == method


def test_every_method_prefix_has_an_area_and_every_area_a_method() -> None:
    prefixes = {method.partition("/")[0] for method in METHODS}
    assert prefixes == set(AREAS)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_method_is_declared_only_in_the_protocol_module_of_its_area(method: str) -> None:
    declaring: set[str] = set()
    for module_name in sorted(set(AREAS.values())):
        for name, value in declared_constants(protocol_module(module_name)).items():
            if name.endswith("_METHODS") and method in typing.cast(dict[str, object], value):
                declaring.add(module_name)
    assert declaring == {area(method)}
    assert declared_constants(protocol_module(area(method)))[constant_name(method)] == method


@pytest.mark.parametrize("notification", sorted(NOTIFICATIONS))
def test_each_notification_is_declared_beside_its_params_model(notification: str) -> None:
    module = importlib.import_module(NOTIFICATIONS[notification].__module__)
    assert declared_constants(module)[constant_name(notification)] == notification


@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_method_is_handled_in_the_handler_module_of_its_area(method: str) -> None:
    handler = load_all().handlers[method]
    assert handler.__module__ == f"sidecar.handlers.{area(method)}"


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
