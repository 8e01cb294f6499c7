"""One interrupt model: every question to the author is a pending record in the store, with a
typed kind (its payload and answer models in `sidecar.protocol`) and an origin that says how an
answer takes effect. `RunManager.resume` is the one path for every answer:

- `live`: raised during a tool call of a running turn (an MCP server's elicitation or sampling,
  a subagent's question or permission request); the answer resolves the call's wait in place;
- `graph`: a LangGraph interrupt of a paused turn; the answer resumes it with `Command(resume)`;
- `uncertain`: a call that may have run before a crash (`sidecar.runtime.recovery`); the answer
  goes to the journal and the turn continues from its checkpoint.

Every record is committed before its event is sent, so a question the author saw survives a
crash: graph questions as they are, live ones folded into their call's uncertain question.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ValidationError

from mcp_servers.field_errors import describe
from sidecar.protocol import (
    ApprovalValue,
    ChangesetValue,
    EscalationValue,
    FormValue,
    PlanApprovalValue,
    QuestionValue,
    SamplingValue,
)
from sidecar.runtime.errors import InvalidResumeValueError, NoSuchInterruptError
from sidecar.store import InterruptRecord, Store


class Origin(StrEnum):
    LIVE = "live"
    GRAPH = "graph"
    UNCERTAIN = "uncertain"


VALUE_MODELS: dict[str, type[BaseModel]] = {
    "approval": ApprovalValue,
    "question": QuestionValue,
    "plan_approval": PlanApprovalValue,
    "form": FormValue,
    "sampling": SamplingValue,
    "escalation": EscalationValue,
    "changeset": ChangesetValue,
}
"""The answer model of each interrupt kind."""

GRAPH_KINDS = frozenset({"approval", "question", "plan_approval"})
"""Kinds a paused turn's graph raises (the others arise only live, during a call)."""


def checked_value(kind: str, value: dict[str, Any]) -> dict[str, Any]:
    """The answer validated against its kind's model, as JSON.

    Raises:
        InvalidResumeValueError: the value does not fit the kind.
    """
    model = VALUE_MODELS.get(kind)
    if model is None:
        raise InvalidResumeValueError(f"interrupts of kind {kind!r} take no answer")
    try:
        return model.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        raise InvalidResumeValueError(describe(exc)) from exc


def pending_record(store: Store, thread_id: str, interrupt_id: str) -> InterruptRecord:
    """The thread's pending interrupt of this id.

    Raises:
        NoSuchInterruptError: none is pending.
    """
    for record in store.pending_interrupts(thread_id):
        if record.id == interrupt_id:
            return record
    raise NoSuchInterruptError(interrupt_id)


def origin_of(store: Store, record: InterruptRecord) -> Origin:
    """Where a pending (not live) interrupt came from.

    Raises:
        NoSuchInterruptError: a kind the paused graph cannot take an answer for.
    """
    if store.uncertain_question(record.id) is not None:
        return Origin.UNCERTAIN
    if record.kind not in GRAPH_KINDS:
        raise NoSuchInterruptError(record.id)
    return Origin.GRAPH


def graph_waits_on_author(store: Store, thread_id: str) -> bool:
    """True while a graph question of the thread is pending (a retry would only ask again)."""
    return any(
        origin_of_or_none(store, r) is Origin.GRAPH for r in store.pending_interrupts(thread_id)
    )


def origin_of_or_none(store: Store, record: InterruptRecord) -> Origin | None:
    try:
        return origin_of(store, record)
    except NoSuchInterruptError:
        return None
