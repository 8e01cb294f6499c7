"""What a turn asks the author: one union of typed questions, discriminated on `kind`.

A question is stored with its interrupt (the interrupts table and LangGraph's checkpoint) and
sent to the window as JSON, so each is a `TypedDict`: the shape pyright checks at every place that
builds one is exactly the JSON a checkpoint written by an earlier release holds. The runtime
validates each against the wire's interrupt union before the window sees it
(`sidecar.runtime.wire.interrupt_from_payload`).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

from sidecar.host.questions import FormQuestion, SamplingQuestion
from sidecar.json_value import JsonObject

__all__ = [
    "ApprovalQuestion",
    "AuthorQuestion",
    "ChangesetQuestion",
    "EscalationQuestion",
    "FormQuestion",
    "MemoryChangeEntry",
    "MemorySideEntry",
    "PlanApprovalQuestion",
    "Question",
    "SamplingQuestion",
]


class MemorySideEntry(TypedDict):
    """A memory as it is before, or would be after, a change the author is asked about."""

    tier: str
    text: str
    pinned: bool
    provenance: str


class MemoryChangeEntry(TypedDict):
    """The memory change an approval asks about: `before` is None for a new memory, `after`
    None for one forgotten; `untrusted` says what untrusted content the turn had read."""

    key: str
    op: str
    before: MemorySideEntry | None
    after: MemorySideEntry | None
    untrusted: str


class ApprovalQuestion(TypedDict):
    """May this tool call run? (`diff`: what a write would change, when the server can say;
    `memory`: the memory change, for a memory write a turn that read untrusted content asks
    about.)"""

    kind: Literal["approval"]
    title: str
    body: str
    server: str
    tool: str
    arguments: JsonObject
    call_id: str
    diff: NotRequired[str | None]
    definition_changed: NotRequired[bool]
    definition_diff: NotRequired[str | None]
    memory: NotRequired[MemoryChangeEntry]


class AuthorQuestion(TypedDict):
    """A question in words, with the answers offered (the author may also type one)."""

    kind: Literal["question"]
    title: str
    body: str
    question: str
    choices: list[str]


class PlanApprovalQuestion(TypedDict):
    """May this plan run, as proposed or as the author edits it?"""

    kind: Literal["plan_approval"]
    title: str
    body: str
    plan_id: str
    version: int
    goal: str
    tasks: list[JsonObject]
    profiles: list[str]
    estimate_tokens: NotRequired[int]
    estimate_cost: NotRequired[float | None]
    estimate: NotRequired[str]
    """What the plan will likely use, in a sentence (`sidecar.plans.estimate`)."""


class EscalationQuestion(TypedDict):
    """A task out of attempts, stalled for good or over budget: retry, reassign, skip, abort."""

    kind: Literal["escalation"]
    title: str
    body: str
    plan_id: str
    reason: Literal["failed", "stalled", "budget"]
    attempts: int
    error: str
    profiles: list[str]


class ChangesetQuestion(TypedDict):
    """Which of an agent's changes (made in an isolated copy) reach the workspace?"""

    kind: Literal["changeset"]
    title: str
    body: str
    agent: str
    workspace: str
    folder: str
    isolation: str
    files: list[JsonObject]
    accepted_by_grant: list[str]
    summary: str


Question: TypeAlias = (
    ApprovalQuestion
    | AuthorQuestion
    | PlanApprovalQuestion
    | EscalationQuestion
    | ChangesetQuestion
    | FormQuestion
    | SamplingQuestion
)
"""Everything a turn, a task or a server may ask the author."""
