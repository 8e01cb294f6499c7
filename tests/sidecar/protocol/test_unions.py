"""The event union picks its member by `type`, the interrupt union by `kind`."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from sidecar.protocol import (
    TERMINAL_EVENT_TYPES,
    ApprovalInterrupt,
    InterruptEvent,
    InterruptInfo,
    QuestionInterrupt,
    RunEventBody,
    RunFailed,
    RunFinished,
    ThreadGetResult,
    Token,
)
from tests.sidecar.protocol.samples import EVENT_SAMPLES, METHOD_SAMPLES

EVENTS: TypeAdapter[Any] = TypeAdapter(RunEventBody)
INTERRUPTS: TypeAdapter[Any] = TypeAdapter(InterruptInfo)


def _error_types(exc: ValidationError) -> list[str]:
    return [e["type"] for e in exc.errors()]


@pytest.mark.parametrize("event", EVENT_SAMPLES, ids=lambda e: type(e).__name__)
def test_an_event_dict_validates_to_the_class_its_type_names(event: Any) -> None:
    parsed = EVENTS.validate_python(event.model_dump(mode="json"))
    assert type(parsed) is type(event)
    assert parsed == event


def test_the_same_fields_under_another_type_tag_make_another_event() -> None:
    assert EVENTS.validate_python({"type": "run_finished"}) == RunFinished()
    assert EVENTS.validate_python({"type": "token", "text": "a"}) == Token(text="a")


def test_an_unknown_event_type_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        EVENTS.validate_python({"type": "telepathy", "text": "a"})
    assert _error_types(info.value) == ["union_tag_invalid"]


def test_an_event_without_a_type_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        EVENTS.validate_python({"text": "a"})
    assert _error_types(info.value) == ["union_tag_not_found"]


def test_an_event_is_validated_only_against_the_member_its_type_names() -> None:
    # A token missing its text is an error of the token member, not "no member matched".
    with pytest.raises(ValidationError) as info:
        EVENTS.validate_python({"type": "token"})
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [("missing", ("token", "text"))]


def test_terminal_event_types_are_members_of_the_union() -> None:
    tags = {type(e).model_fields["type"].default for e in EVENT_SAMPLES}
    assert tags >= TERMINAL_EVENT_TYPES
    failed = RunFailed.model_validate(
        {"type": "run_failed", "error": {"code": "c", "message": "m"}}
    )
    assert failed.type in TERMINAL_EVENT_TYPES


def test_interrupts_discriminate_on_kind() -> None:
    question = INTERRUPTS.validate_python(
        {"kind": "question", "id": "i", "title": "t", "body": "b", "question": "q?"}
    )
    approval = INTERRUPTS.validate_python(
        {
            "kind": "approval",
            "id": "i",
            "title": "t",
            "body": "b",
            "server": "s",
            "tool": "x",
            "arguments": {},
            "call_id": "c",
        }
    )
    assert isinstance(question, QuestionInterrupt)
    assert question.choices == ()
    assert isinstance(approval, ApprovalInterrupt)
    assert approval.uncertain is False


def test_an_unknown_interrupt_kind_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        INTERRUPTS.validate_python({"kind": "telepathy", "id": "i", "title": "t", "body": "b"})
    assert _error_types(info.value) == ["union_tag_invalid"]


def test_interrupts_nested_in_events_and_results_keep_their_class() -> None:
    result = METHOD_SAMPLES[ThreadGetResult]
    assert isinstance(result, ThreadGetResult)
    back = ThreadGetResult.model_validate_json(result.model_dump_json())
    assert [type(i) for i in back.interrupts] == [ApprovalInterrupt, QuestionInterrupt]
    event = EVENTS.validate_json(InterruptEvent(interrupt=result.interrupts[1]).model_dump_json())
    assert isinstance(event.interrupt, QuestionInterrupt)
