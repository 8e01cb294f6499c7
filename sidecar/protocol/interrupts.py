"""What a run asks the author (interrupts, discriminated on `kind`) and the values that answer
them (`run/resume`'s `value`). The changeset interrupt of the review gate lives in `review`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.interrupt_base import InterruptBase as _InterruptBase
from sidecar.protocol.memory import MemoryChangeInfo
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.plans import PlanTaskSpec
from sidecar.protocol.review import ChangesetInterrupt


class ApprovalInterrupt(_InterruptBase):
    """A tool call that needs the author's permission. Writes carry a unified diff; a memory
    change made after untrusted content carries `memory` (server `memory`, its tool the
    change's op): allowing it, by any decision, saves that change once."""

    kind: Literal["approval"] = "approval"
    server: str
    tool: str
    arguments: dict[str, Any]
    call_id: str
    diff: str | None = None
    uncertain: bool = Field(
        default=False,
        description="The call may already have run before a crash; allowing runs it again.",
    )
    definition_changed: bool = Field(
        default=False,
        description="The tool's name, description or input schema changed since the author "
        "approved it: the call is held until approved again.",
    )
    definition_diff: str | None = Field(
        default=None,
        description="Unified diff of the approved definition (JSON) against the current one.",
    )
    memory: MemoryChangeInfo | None = Field(
        default=None,
        description="The memory before and after, when the call is a memory change a turn that "
        "read untrusted content asks the author about.",
    )


class QuestionInterrupt(_InterruptBase):
    """The agent asks the author something; `choices` empty means free text."""

    kind: Literal["question"] = "question"
    question: str
    choices: tuple[str, ...] = ()


class FormInterrupt(_InterruptBase):
    """An MCP server asks the author to fill in a form (elicitation).

    The dialog is generated from `requested_schema`: a flat JSON Schema object whose properties
    are strings (optionally with `format`), numbers, integers, booleans, single-select enums
    (`enum` or `oneOf` of `const`/`title`) and multi-select enums (arrays of those). With `url`
    set it is a URL-mode elicitation: the author opens the link and accepts or declines.
    """

    kind: Literal["form"] = "form"
    server: str
    message: str
    requested_schema: dict[str, Any] = Field(default_factory=dict[str, Any])
    url: str | None = None
    call_id: str | None = None


class SamplingMessageInfo(WireModel):
    """One message of a sampling request, as text (other content is summarised)."""

    role: Literal["user", "assistant"]
    text: str


class SamplingInterrupt(_InterruptBase):
    """An MCP server asks to use the author's model (sampling). Allowing it sends exactly this
    request to the configured model and returns the answer to the server."""

    kind: Literal["sampling"] = "sampling"
    server: str
    messages: tuple[SamplingMessageInfo, ...]
    system_prompt: str | None = None
    max_tokens: int
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    model_hints: tuple[str, ...] = ()
    call_id: str | None = None


class PlanApprovalInterrupt(_InterruptBase):
    """The planner proposes a plan: the author approves it as is, edits it (reassign, reorder,
    drop or change tasks) or rejects it. Nothing runs before the answer."""

    kind: Literal["plan_approval"] = "plan_approval"
    plan_id: str
    version: int
    goal: str
    tasks: tuple[PlanTaskSpec, ...]
    profiles: tuple[str, ...] = Field(default=(), description="Profile ids tasks may go to.")
    estimate_tokens: int | None = Field(
        default=None, description="Tokens the plan will likely use (from earlier tasks)."
    )
    estimate_cost: float | None = Field(
        default=None, description="USD it will likely cost; None where a price is unknown."
    )
    estimate: str | None = Field(default=None, description="The estimate in a sentence.")


class EscalationInterrupt(_InterruptBase):
    """A task stalled or failed after its retries: the author decides what happens next."""

    kind: Literal["escalation"] = "escalation"
    plan_id: str
    reason: Literal["stalled", "failed", "budget"]
    attempts: int
    error: str | None = None
    profiles: tuple[str, ...] = ()


InterruptInfo: TypeAlias = Annotated[
    ApprovalInterrupt
    | QuestionInterrupt
    | FormInterrupt
    | SamplingInterrupt
    | PlanApprovalInterrupt
    | EscalationInterrupt
    | ChangesetInterrupt,
    Field(discriminator="kind"),
]


class ApprovalValue(WireModel):
    """Resume value for an `approval` interrupt."""

    decision: Literal["allow_once", "allow_thread", "allow_always", "deny"] = Field(
        description="`allow_always`: this tool of this server runs without asking in every "
        "thread, until revoked in the grants panel."
    )
    reason: str | None = None


class QuestionValue(WireModel):
    """Resume value for a `question` interrupt."""

    answer: str


class FormValue(WireModel):
    """Resume value for a `form` interrupt: `accept` carries the filled-in `content`; `decline`
    is an explicit no; `cancel` means the author dismissed the form without choosing."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str] | None] | None = None


class SamplingValue(WireModel):
    """Resume value for a `sampling` interrupt."""

    decision: Literal["allow", "deny"]
    reason: str | None = None


class PlanApprovalValue(WireModel):
    """Resume value for a `plan_approval` interrupt. `tasks`, when given, replace the proposed
    tasks (the author's edits) and are validated like the proposal."""

    decision: Literal["approve", "reject"]
    tasks: tuple[PlanTaskSpec, ...] | None = None
    reason: str | None = None
    accept_paths: tuple[str, ...] | None = Field(
        default=None,
        description="Workspace paths (relative files or folders) inside which the changes of "
        "the plan's strong agents are accepted without asking, while the plan runs. Other "
        "files of a changeset still go to the author; conflicts are never applied.",
    )


class EscalationValue(WireModel):
    """Resume value for an `escalation` interrupt. `reassign` needs `profile`."""

    action: Literal["retry", "reassign", "skip", "abort"]
    profile: str | None = None
