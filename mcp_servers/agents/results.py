"""The outcome of one controller run: `OperatorResult` and the models it is built from."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue

Provider: TypeAlias = Literal["claude", "codex", "openclaw"]
"""The strong-agent CLIs Atrium can drive."""

RunStatus: TypeAlias = Literal["success", "failed", "interrupted", "timeout"]
ArtifactChange: TypeAlias = Literal["added", "modified", "deleted"]


class ResultModel(BaseModel):
    """Base for result models: frozen, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ErrorCode(StrEnum):
    """Normalized failure causes, stable across providers (callers branch on these)."""

    CLI_NOT_FOUND = "cli_not_found"
    SPAWN_FAILED = "spawn_failed"
    API_ERROR = "api_error"
    AUTH_FAILED = "auth_failed"
    RATE_LIMITED = "rate_limited"
    MODEL_UNREACHABLE = "model_unreachable"
    CONFIGURATION = "configuration"
    MAX_TURNS = "max_turns"
    BUDGET_EXCEEDED = "budget_exceeded"
    AGENT_ERROR = "agent_error"
    PROCESS_EXITED = "process_exited"
    NO_RESULT = "no_result"
    RESUME_FAILED = "resume_failed"
    INTERRUPTED = "interrupted"
    TIMEOUT = "timeout"
    INTERNAL_ERROR = "internal_error"


class NormalizedError(ResultModel):
    """A failure as Atrium sees it: a stable code, a human message, provider details."""

    code: ErrorCode
    message: str
    detail: dict[str, JsonValue] = Field(default_factory=dict)


class NativeSessionRef(ResultModel):
    """The CLI's own session/thread id, usable for a later `resume`."""

    provider: Provider
    session_id: str


class Artifact(ResultModel):
    """A file the agent changed during the run."""

    path: str
    change: ArtifactChange


class RunMetrics(ResultModel):
    """Usage as reported by the CLI; `None` where the CLI does not report it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None
    turns: int | None = None
    tool_calls: int = 0


class PermissionDenial(ResultModel):
    """A tool use the CLI refused (by rule, by the author, or for lack of an answer)."""

    tool_name: str
    call_id: str | None = None
    input: dict[str, JsonValue] = Field(default_factory=dict)


class TraceRef(ResultModel):
    """Where the run's traces live: raw stdout (verbatim) and normalized events (JSONL)."""

    run_id: str
    raw_path: Path
    normalized_path: Path
    stdin_path: Path
    stderr_path: Path
    result_path: Path


class AppliedPolicy(ResultModel):
    """How Atrium's tool policy was mapped onto the CLI, and whether the CLI can ask."""

    mode: Literal["read_only", "workspace_write", "full_access"]
    native: tuple[str, ...]
    can_ask_permission: bool
    note: str


class Attempt(ResultModel):
    """One spawn of the CLI within a run (a failed resume is followed by a fresh start)."""

    mode: Literal["start", "resume"]
    resume_session_id: str | None = None
    exit_code: int | None = None
    outcome: Literal["completed", "resume_failed", "failed"]


class OperatorResult(ResultModel):
    """The result of a controller run, whatever the provider."""

    run_id: str
    provider: Provider
    status: RunStatus
    session: NativeSessionRef | None = None
    final_message: str | None = None
    artifacts: tuple[Artifact, ...] = ()
    metrics: RunMetrics = Field(default_factory=RunMetrics)
    trace: TraceRef | None = None
    error: NormalizedError | None = None
    permission_denials: tuple[PermissionDenial, ...] = ()
    policy: AppliedPolicy | None = None
    attempts: tuple[Attempt, ...] = ()
    exit_code: int | None = None
    notes: tuple[str, ...] = ()
