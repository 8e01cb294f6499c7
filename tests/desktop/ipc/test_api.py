"""`SidecarApi` is held to the method table: a typed method for every wire method in
`sidecar.protocol.METHODS`, none for a method the wire lacks, and each one sends its own wire
method with the table's params model and is typed with the table's result model."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from sidecar.protocol import METHODS
from tests.desktop.support import FakeSender


def api_name(wire_method: str) -> str:
    """The `SidecarApi` method for a wire method: `thread/set_budget` is `thread_set_budget`."""
    return wire_method.replace("/", "_")


def api_methods() -> dict[str, Callable[..., Any]]:
    return {
        name: member
        for name, member in inspect.getmembers(SidecarApi, inspect.isfunction)
        if not name.startswith("_")
    }


def test_every_wire_method_has_an_api_method():
    missing = sorted(wire for wire in METHODS if api_name(wire) not in api_methods())
    assert missing == []


def test_every_api_method_names_a_wire_method():
    wire_names = {api_name(wire) for wire in METHODS}
    assert sorted(set(api_methods()) - wire_names) == []


@pytest.mark.parametrize("wire", sorted(METHODS))
def test_an_api_method_sends_its_wire_method_typed_as_the_table_says(wire: str):
    spec = METHODS[wire]
    method = api_methods().get(api_name(wire))
    assert method is not None, f"no SidecarApi.{api_name(wire)} for {wire}"
    hints = typing.get_type_hints(method)
    assert hints["return"] == PendingRequest[spec.result]
    parameters = [name for name in inspect.signature(method).parameters if name != "self"]
    sender = FakeSender()
    call = getattr(SidecarApi(sender), api_name(wire))
    if spec.params.model_fields:
        assert parameters == ["params"] and hints["params"] is spec.params
        pending = call(spec.params.model_construct())
    else:
        assert parameters == []  # a params model without fields is built by the api
        pending = call()
    [(sent, params, sent_pending)] = sender.sent
    assert (sent, type(params), sent_pending) == (wire, spec.params, pending)


def _models_in(annotation: object) -> list[type[BaseModel]]:
    found = (
        [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []
    )
    for arg in typing.get_args(annotation):
        found += _models_in(arg)
    return found


def _required_nullable(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[str]:
    if model in seen:
        return []
    seen.add(model)
    found = []
    for name, field in model.model_fields.items():
        if field.is_required() and type(None) in typing.get_args(field.annotation):
            found.append(f"{model.__name__}.{name}")
        for inner in _models_in(field.annotation):
            found += _required_nullable(inner, seen)
    return found


def test_every_none_the_client_leaves_out_is_the_fields_default():
    """The client sends params without their None fields (`exclude_none`): a field that may be
    None must then default to None, or the sidecar answers "invalid params" (as `grant/revoke`
    of an "always allow" grant once did)."""
    seen: set[type[BaseModel]] = set()
    found = [name for spec in METHODS.values() for name in _required_nullable(spec.params, seen)]
    assert found == []
