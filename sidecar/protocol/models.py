"""Records that cross the wire: threads, messages, tools, settings, interrupts."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


ThreadStatus: TypeAlias = Literal["idle", "running", "interrupted", "failed", "cancelled"]


class ThreadInfo(WireModel):
    id: str
    title: str
    status: ThreadStatus
    created_at: float
    updated_at: float


class ToolCallInfo(WireModel):
    id: str
    server: str
    tool: str
    arguments: dict[str, Any]


class MessageInfo(WireModel):
    """One entry of the conversation of record.

    Roles: `user`, `assistant` (text and/or tool calls), `tool` (a result; `tool_call_id` names
    the call, `is_error` marks failures and denials).
    """

    id: str
    thread_id: str
    role: Literal["user", "assistant", "tool"]
    content: str
    created_at: float
    tool_calls: tuple[ToolCallInfo, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


class ErrorInfo(WireModel):
    code: str
    message: str


class ToolInfo(WireModel):
    name: str = Field(description="`<server>__<tool>`, the name the model sees.")
    server: str
    tool: str
    description: str
    read_only: bool
    destructive: bool
    input_schema: dict[str, Any]


class SettingsInfo(WireModel):
    model: str | None
    api_base: str | None
    workspace: str
    has_api_key: bool
    model_source: Literal["settings", "environment", "none"]


class _InterruptBase(WireModel):
    id: str
    title: str
    body: str
    run_id: str | None = None


class ApprovalInterrupt(_InterruptBase):
    """A tool call that needs the author's permission. Writes carry a unified diff."""

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


class QuestionInterrupt(_InterruptBase):
    """The agent asks the author something; `choices` empty means free text."""

    kind: Literal["question"] = "question"
    question: str
    choices: tuple[str, ...] = ()


InterruptInfo: TypeAlias = Annotated[
    ApprovalInterrupt | QuestionInterrupt, Field(discriminator="kind")
]


class ApprovalValue(WireModel):
    """Resume value for an `approval` interrupt."""

    decision: Literal["allow_once", "allow_thread", "deny"]
    reason: str | None = None


class QuestionValue(WireModel):
    """Resume value for a `question` interrupt."""

    answer: str
