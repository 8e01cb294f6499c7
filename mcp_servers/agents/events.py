"""Normalized events a strong-agent controller emits upward, discriminated on `type`.

Every provider's native stream (Claude Code stream-json, Codex `exec --json`, OpenClaw's JSON
document) is translated into this one vocabulary, so the MCP server and Atrium never see
provider-specific shapes. Events are immutable pydantic models; `AGENT_EVENT_ADAPTER` validates
and dumps the union (the normalized trace is one `dump_event` line per event).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from mcp_servers.agents.results import ArtifactChange, NormalizedError, RunStatus

Channel: TypeAlias = Literal["text", "thinking"]
"""Which stream a piece of assistant output belongs to: visible text or reasoning."""


class EventModel(BaseModel):
    """Base for every normalized event: frozen, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class SessionStarted(EventModel):
    """The CLI announced its native session (Claude `system/init`, Codex `thread.started`)."""

    type: Literal["session_started"] = "session_started"
    session_id: str
    model: str | None = None
    cwd: str | None = None
    tools: tuple[str, ...] = ()


class MessageDelta(EventModel):
    """A streamed fragment of assistant output (only when the CLI streams partials)."""

    type: Literal["message_delta"] = "message_delta"
    text: str
    channel: Channel = "text"


class MessageCompleted(EventModel):
    """One complete block of assistant output; `parent_call_id` is set inside subagents."""

    type: Literal["message_completed"] = "message_completed"
    text: str
    channel: Channel = "text"
    message_id: str | None = None
    parent_call_id: str | None = None


class ToolCall(EventModel):
    """The agent invoked a tool (native tool name kept, e.g. `Write` or `command_execution`)."""

    type: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    input: dict[str, JsonValue] = Field(default_factory=dict)
    parent_call_id: str | None = None


class ToolResult(EventModel):
    """A tool finished; `denied` marks results that are a permission refusal, not an execution."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    output: str = ""
    is_error: bool = False
    denied: bool = False
    exit_code: int | None = None


class Question(EventModel):
    """One question of an AskUserQuestion request, with the labels the author may pick."""

    question: str
    header: str | None = None
    options: tuple[str, ...] = ()
    multi_select: bool = False


class PermissionRequest(EventModel):
    """The CLI asks whether a tool may run (or asks the author a question).

    Answer it with `AgentController.answer_permission(request_id, decision)`.
    """

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    input: dict[str, JsonValue] = Field(default_factory=dict)
    call_id: str | None = None
    description: str | None = None
    kind: Literal["tool", "question"] = "tool"
    questions: tuple[Question, ...] = ()


class ArtifactCreated(EventModel):
    """The agent added, modified or deleted a file."""

    type: Literal["artifact_created"] = "artifact_created"
    path: str
    change: ArtifactChange
    call_id: str | None = None


class StateHint(EventModel):
    """Progress information without content (status, plan, rate limit, resume fallback...)."""

    type: Literal["state_hint"] = "state_hint"
    hint: str
    detail: dict[str, JsonValue] = Field(default_factory=dict)


class UsageReported(EventModel):
    """The run's token use so far, as the CLI streams it (Claude per model message, Codex per
    turn): totals for the whole run, so a consumer can stop it mid-run at a budget."""

    type: Literal["usage"] = "usage"
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


class Heartbeat(EventModel):
    """The run is alive but the CLI has been silent for `idle_s` seconds."""

    type: Literal["heartbeat"] = "heartbeat"
    elapsed_s: float
    idle_s: float


class Completed(EventModel):
    """Terminal event of a successful run; the full `OperatorResult` is on the controller."""

    type: Literal["completed"] = "completed"
    session_id: str | None = None
    final_message: str | None = None


class Failed(EventModel):
    """Terminal event of a run that failed, was interrupted or timed out."""

    type: Literal["failed"] = "failed"
    status: RunStatus
    error: NormalizedError
    session_id: str | None = None


AgentEvent: TypeAlias = Annotated[
    SessionStarted
    | MessageDelta
    | MessageCompleted
    | ToolCall
    | ToolResult
    | PermissionRequest
    | ArtifactCreated
    | StateHint
    | UsageReported
    | Heartbeat
    | Completed
    | Failed,
    Field(discriminator="type"),
]

AGENT_EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def dump_event(event: AgentEvent) -> str:
    """One compact JSON line for an event (the normalized-trace format)."""
    return event.model_dump_json()


def load_event(line: str) -> AgentEvent:
    """Parse one normalized-trace line back into its event model."""
    return AGENT_EVENT_ADAPTER.validate_json(line)
