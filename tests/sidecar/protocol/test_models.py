"""Every wire model survives model → JSON → model unchanged and rejects undeclared fields."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.protocol import (
    METHODS,
    NOTIFICATIONS,
    RunEventBody,
    RunEventParams,
    WireModel,
)
from tests.sidecar.protocol.samples import EVENT_SAMPLES, METHOD_SAMPLES, OTHER_SAMPLES

ALL_SAMPLES: list[WireModel] = [*METHOD_SAMPLES.values(), *EVENT_SAMPLES, *OTHER_SAMPLES]
WITH_FIELDS = [m for m in ALL_SAMPLES if type(m).model_fields]


def _sample_id(model: WireModel) -> str:
    return type(model).__name__


def _event_classes() -> set[type[Any]]:
    union = typing.get_args(RunEventBody)[0]
    return set(typing.get_args(union))


def test_every_method_model_has_a_sample() -> None:
    declared = {spec.params for spec in METHODS.values()} | {
        spec.result for spec in METHODS.values()
    }
    assert declared <= set(METHOD_SAMPLES)


def test_every_run_event_type_has_a_sample() -> None:
    assert {type(e) for e in EVENT_SAMPLES} == _event_classes()


@pytest.mark.parametrize("model", list(METHOD_SAMPLES.values()), ids=_sample_id)
def test_method_models_round_trip_through_json_text(model: WireModel) -> None:
    text = model.model_dump_json()
    assert type(model).model_validate_json(text) == model


@pytest.mark.parametrize("model", list(METHOD_SAMPLES.values()), ids=_sample_id)
def test_method_models_round_trip_through_a_json_decoded_dict(model: WireModel) -> None:
    # The server validates params from json.loads output and dumps results with mode="json".
    decoded = json.loads(json.dumps(model.model_dump(mode="json")))
    assert type(model).model_validate(decoded) == model


@pytest.mark.parametrize("event", EVENT_SAMPLES, ids=_sample_id)
def test_run_events_round_trip_inside_the_run_event_notification(event: RunEventBody) -> None:
    params = RunEventParams(run_id="r-1", thread_id="t-1", seq=7, event=event)
    text = json.dumps({"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump()})
    frame = json.loads(text)
    assert NOTIFICATIONS[frame["method"]] is RunEventParams
    back = RunEventParams.model_validate(frame["params"])
    assert back == params
    assert type(back.event) is type(event)


@pytest.mark.parametrize("event", EVENT_SAMPLES, ids=_sample_id)
def test_run_events_carry_their_type_tag_on_the_wire(event: WireModel) -> None:
    dumped = event.model_dump(mode="json")
    assert dumped["type"] == type(event).model_fields["type"].default


def test_run_event_type_tags_are_unique() -> None:
    tags = [cls.model_fields["type"].default for cls in _event_classes()]
    assert len(tags) == len(set(tags))


@pytest.mark.parametrize("model", ALL_SAMPLES, ids=_sample_id)
def test_unknown_fields_are_rejected(model: WireModel) -> None:
    data = model.model_dump(mode="json")
    data["unexpected"] = 1
    with pytest.raises(ValidationError) as info:
        type(model).model_validate(data)
    assert [e["type"] for e in info.value.errors()] == ["extra_forbidden"]
    assert info.value.errors()[0]["loc"] == ("unexpected",)


def test_unknown_fields_inside_a_nested_event_are_rejected() -> None:
    raw = {
        "run_id": "r",
        "thread_id": "t",
        "seq": 0,
        "event": {"type": "token", "text": "x", "colour": "red"},
    }
    with pytest.raises(ValidationError) as info:
        RunEventParams.model_validate(raw)
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [
        ("extra_forbidden", ("event", "token", "colour"))
    ]


@pytest.mark.parametrize("model", WITH_FIELDS, ids=_sample_id)
def test_wire_models_are_frozen(model: WireModel) -> None:
    name = next(iter(type(model).model_fields))
    with pytest.raises(ValidationError) as info:
        setattr(model, name, getattr(model, name))
    assert info.value.errors()[0]["type"] == "frozen_instance"
