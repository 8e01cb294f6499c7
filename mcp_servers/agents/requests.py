"""What a caller asks of a controller: start/resume requests, permission decisions, and
messages to a running agent (answered with a `MessageReceipt`)."""

from __future__ import annotations

import mimetypes
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue

PolicyMode: TypeAlias = Literal["read_only", "workspace_write", "full_access"]


def new_run_id() -> str:
    """A fresh run id (also the stem of the run's trace files)."""
    return uuid.uuid4().hex


class RequestModel(BaseModel):
    """Base for request models: frozen, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Attachment(RequestModel):
    """A file handed to the agent with the instruction; images go as images where supported."""

    path: Path
    mime_type: str | None = None

    @property
    def media_type(self) -> str:
        """The declared MIME type, else one guessed from the file name."""
        return self.mime_type or mimetypes.guess_type(self.path.name)[0] or ""

    @property
    def is_image(self) -> bool:
        """Whether the attachment is an image (by declared or guessed MIME type)."""
        return self.media_type.startswith("image/")


class ToolPolicy(RequestModel):
    """Atrium's tool policy for a run; each controller maps it onto its CLI's controls.

    `mode` bounds what the agent may change; `allowed_tools`/`disallowed_tools` are native
    tool rules passed through where the CLI supports them (Claude Code).
    """

    mode: PolicyMode = "workspace_write"
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()


class StartRequest(RequestModel):
    """Start a fresh native session with an instruction.

    `session_id` is Atrium's session id (correlation only); `timeout_s` bounds the whole run,
    `idle_timeout_s` bounds CLI silence while no permission request is pending.
    """

    session_id: str
    working_dir: Path
    instruction: str
    attachments: tuple[Attachment, ...] = ()
    tool_policy: ToolPolicy = Field(default_factory=ToolPolicy)
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = None
    idle_timeout_s: float | None = None
    model: str | None = None
    max_turns: int | None = None
    run_id: str = Field(default_factory=new_run_id)


class ResumeRequest(StartRequest):
    """Continue the native session `native_session_id`; start fresh if that fails and allowed."""

    native_session_id: str
    fallback_to_start: bool = True


class AllowTool(RequestModel):
    """Let the tool run, with the original input or an edited `updated_input`."""

    behavior: Literal["allow"] = "allow"
    updated_input: Mapping[str, JsonValue] | None = None


class DenyTool(RequestModel):
    """Refuse the tool; the agent sees `message`. `interrupt` also stops the whole turn."""

    behavior: Literal["deny"] = "deny"
    message: str
    interrupt: bool = False


class AnswerQuestion(RequestModel):
    """The author's answers to an AskUserQuestion request: question text -> chosen label(s)."""

    behavior: Literal["answer"] = "answer"
    answers: dict[str, str]


PermissionDecision: TypeAlias = Annotated[
    AllowTool | DenyTool | AnswerQuestion, Field(discriminator="behavior")
]


MessageDelivery: TypeAlias = Literal["stdin"]
"""How a message reaches a running agent: Claude Code's stream-json stdin (the only CLI here that
takes input mid-run)."""


class MessageReceipt(RequestModel):
    """A message handed to a running agent: its id (in the run's trace as `message_sent`), how it
    travels, and when the agent will see it (`note`)."""

    run_id: str
    message_id: str
    delivery: MessageDelivery
    note: str
