"""The controller contract every strong-agent CLI adapter implements.

A controller drives one native CLI session at a time, one run after another:

    async with ClaudeCodeController(ClaudeCodeConfig(executable="claude")) as controller:
        await controller.start(StartRequest(session_id=..., working_dir=..., instruction=...))
        async for event in controller.stream():
            if isinstance(event, PermissionRequest):
                await controller.answer_permission(event.request_id, AllowTool())
        result = await controller.wait()

Requests never block on the run: `start`/`resume` return once the run is launched, `interrupt`
returns at once, and everything else arrives as events ending in `completed` or `failed`.
Run failures (CLI missing, API error, timeout...) are results, not exceptions. A message for the
running agent goes in with `send_message` where the CLI can take one mid-run (Claude Code); the
others refuse it with `InputUnsupportedError`.

The contract's models live in `requests`, `events` and `results` and are re-exported here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from types import TracebackType
from typing import ClassVar, Self

from mcp_servers.agents.errors import InputUnsupportedError
from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    Completed,
    Failed,
    Heartbeat,
    MessageCompleted,
    MessageDelta,
    PermissionRequest,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.requests import (
    AllowTool,
    AnswerQuestion,
    Attachment,
    DenyTool,
    MessageReceipt,
    PermissionDecision,
    ResumeRequest,
    StartRequest,
    ToolPolicy,
)
from mcp_servers.agents.results import (
    ErrorCode,
    NormalizedError,
    OperatorResult,
    Provider,
    RunMetrics,
    TraceRef,
)

__all__ = [
    "AgentController",
    "AgentEvent",
    "AllowTool",
    "AnswerQuestion",
    "ArtifactCreated",
    "Attachment",
    "Completed",
    "DenyTool",
    "ErrorCode",
    "Failed",
    "Heartbeat",
    "MessageCompleted",
    "MessageDelta",
    "MessageReceipt",
    "NormalizedError",
    "OperatorResult",
    "PermissionDecision",
    "PermissionRequest",
    "Provider",
    "ResumeRequest",
    "RunMetrics",
    "SessionStarted",
    "StartRequest",
    "StateHint",
    "ToolCall",
    "ToolPolicy",
    "ToolResult",
    "TraceRef",
]


_CLI_NAMES: dict[Provider, str] = {
    "claude": "Claude Code",
    "codex": "codex exec",
    "openclaw": "openclaw agent (embedded)",
}


class AgentController(ABC):
    """Start, resume, stream, interrupt and answer permissions for one strong-agent CLI."""

    provider: ClassVar[Provider]

    @abstractmethod
    async def __aenter__(self) -> Self:
        """Open the controller (it owns the tasks that drive runs)."""

    @abstractmethod
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop any active run (interrupt, then kill) and wait for its cleanup."""

    @abstractmethod
    async def start(self, request: StartRequest) -> None:
        """Launch a run in a fresh native session.

        Raises:
            ControllerNotOpenError: used outside `async with`.
            RunInProgressError: the previous run has not finished.
        """

    @abstractmethod
    async def resume(self, request: ResumeRequest) -> None:
        """Launch a run continuing `request.native_session_id`.

        If the CLI cannot resume it and `fallback_to_start` is set, the run continues as a fresh
        start; the result's `attempts` and a `resume_failed` state hint record that.

        Raises:
            ControllerNotOpenError: used outside `async with`.
            RunInProgressError: the previous run has not finished.
        """

    @abstractmethod
    def stream(self) -> AsyncIterator[AgentEvent]:
        """The current run's events, ending with `completed` or `failed` (consumable once).

        Raises:
            NoRunError: no run was started.
        """

    @abstractmethod
    async def interrupt(self) -> None:
        """Ask the current run to stop; it ends with status `interrupted`. Returns at once.

        Raises:
            NoRunError: no run was started.
        """

    @abstractmethod
    async def answer_permission(self, request_id: str, decision: PermissionDecision) -> None:
        """Answer a pending `permission_request` event.

        Raises:
            UnknownPermissionRequestError: the id is not pending (or the CLI cannot ask).
            InvalidDecisionError: the decision does not fit the request.
        """

    async def send_message(self, text: str) -> MessageReceipt:
        """Give the running agent a message while it works; returns at once with a receipt.

        The message is recorded in the run's trace (a `message_sent` state hint). This default
        is for CLIs that take no input once started.

        Raises:
            NoRunError: no run is going (none was started, or it has ended).
            InputUnsupportedError: this CLI cannot take input mid-run.
        """
        raise InputUnsupportedError(_CLI_NAMES[self.provider])

    @abstractmethod
    async def wait(self) -> OperatorResult:
        """Wait for the current run to end and return its result.

        Raises:
            NoRunError: no run was started.
        """

    @property
    @abstractmethod
    def result(self) -> OperatorResult | None:
        """The last finished run's result, or None while running / before any run."""
