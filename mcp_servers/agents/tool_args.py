"""The arguments of the agents server's tools: annotated types (descriptions and limits the
client sees in the input schemas) and `RunArgs`, which turns a call into a controller request.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_servers.agents.requests import (
    Attachment,
    ResumeRequest,
    StartRequest,
    ToolPolicy,
    new_run_id,
)
from mcp_servers.agents.results import Provider

ProviderArg = Annotated[Provider, Field(description="Which strong-agent CLI runs the instruction.")]
InstructionArg = Annotated[str, Field(min_length=1, description="What the agent should do.")]
WorkingDirArg = Annotated[
    str, Field(description="Absolute path of the directory the agent works in.")
]
RunIdArg = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The run id agent_run reported.")
]
MessageTextArg = Annotated[
    str, Field(min_length=1, description="What to tell the running agent, as the author would.")
]
SessionIdArg = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$",
        description="The CLI's own session/thread id (result.session.session_id of a run).",
    ),
]
PolicyArg = Annotated[
    ToolPolicy | None,
    Field(
        description=(
            "read_only / workspace_write / full_access, plus native allow/deny tool rules "
            "(Claude Code). The result's `policy` says how it was applied."
        )
    ),
]
TimeoutArg = Annotated[
    float | None, Field(gt=0, description="Seconds for the whole run; none by default.")
]
IdleTimeoutArg = Annotated[
    float | None,
    Field(gt=0, description="Stop after this many silent seconds (not while a question waits)."),
]
AttachmentsArg = Annotated[
    list[str] | None,
    Field(description="Absolute paths of files handed to the agent (images inline)."),
]
ModelArg = Annotated[str | None, Field(description="Model name for the CLI.")]
MaxTurnsArg = Annotated[int | None, Field(gt=0, description="Turn limit (Claude Code).")]
NewRunIdArg = Annotated[
    str | None,
    Field(
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Choose the run id (for agent_status/agent_cancel); generated if omitted.",
    ),
]


SessionPolicyArg = Annotated[
    Literal["new", "resume"],
    Field(description="Start a new native session, or resume native_session_id."),
]
OptionalSessionIdArg = Annotated[
    SessionIdArg | None, Field(description="Required with session='resume'.")
]
FallbackArg = Annotated[
    bool, Field(description="Start a fresh session if the CLI cannot resume this one.")
]


@dataclass(frozen=True)
class RunLimits:
    """Bounds of one run: overall and idle time, and (Claude Code) turns; None = unbounded."""

    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    max_turns: int | None = None


@dataclass(frozen=True, kw_only=True)
class RunArgs:
    """The arguments of an agent_run / agent_resume call."""

    provider: Provider
    instruction: str
    working_dir: str
    native_session_id: str | None = None
    tool_policy: ToolPolicy | None = None
    limits: RunLimits = RunLimits()
    model: str | None = None
    attachments: tuple[str, ...] = ()
    run_id: str | None = None
    fallback_to_start: bool = True

    def check_session_policy(self, session: Literal["new", "resume"]) -> None:
        """Refuse a session policy that does not fit the native session id.

        Raises:
            ToolError: resume without a native session id, or new with one.
        """
        if session == "resume" and self.native_session_id is None:
            raise ToolError("[invalid_params] session='resume' needs native_session_id")
        if session == "new" and self.native_session_id is not None:
            raise ToolError("[invalid_params] native_session_id is only for session='resume'")

    def to_request(self) -> StartRequest:
        """The controller request (a `ResumeRequest` when a native session is given).

        Raises:
            ToolError: a path is not absolute.
        """
        run_id = self.run_id or new_run_id()
        fields: dict[str, Any] = {
            "run_id": run_id,
            "session_id": run_id,
            "working_dir": absolute_path(self.working_dir),
            "instruction": self.instruction,
            "attachments": tuple(Attachment(path=absolute_path(p)) for p in self.attachments),
            "tool_policy": self.tool_policy or ToolPolicy(),
            "timeout_s": self.limits.timeout_s,
            "idle_timeout_s": self.limits.idle_timeout_s,
            "model": self.model,
            "max_turns": self.limits.max_turns,
        }
        if self.native_session_id is None:
            return StartRequest.model_validate(fields)
        fields["native_session_id"] = self.native_session_id
        fields["fallback_to_start"] = self.fallback_to_start
        return ResumeRequest.model_validate(fields)


def absolute_path(path: str) -> Path:
    """`path` as an absolute Path.

    Raises:
        ToolError: the path is relative.
    """
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        raise ToolError(f"[invalid_params] not an absolute path: {path}")
    return candidate
