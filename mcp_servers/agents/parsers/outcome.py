"""Turning a parser's accumulated state plus process facts into the `OperatorResult`.

Pure and shared by the live controllers and the replay tool. The order of evidence: a result the
CLI reported as success wins (even if we were stopping it), unless the CLI then exited non-zero
without an answer; then our own stop reason (timeout, interrupt); then an exit by SIGINT (code 130,
someone stopped the CLI); then the CLI's reported failure; then the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

from mcp_servers.agents.events import Completed, Failed
from mcp_servers.agents.parsers.base import RunAccumulator
from mcp_servers.agents.results import (
    AppliedPolicy,
    Attempt,
    ErrorCode,
    NativeSessionRef,
    NormalizedError,
    OperatorResult,
    Provider,
    RunStatus,
    TraceRef,
)

StopReason = Literal["interrupt", "timeout", "idle_timeout"]
SIGINT_EXIT_CODES = (130, -2)
"""Exit codes of a CLI stopped by SIGINT: 128 + 2 from a shell or Node, -2 as Python reports it."""


@dataclass(frozen=True)
class RunFacts:
    """What the process layer knows about a run that the parser cannot."""

    run_id: str
    provider: Provider
    exit_code: int | None = None
    stop_reason: StopReason | None = None
    stderr_tail: str = ""
    measured_duration_ms: int | None = None
    trace: TraceRef | None = None
    policy: AppliedPolicy | None = None
    attempts: tuple[Attempt, ...] = ()
    notes: tuple[str, ...] = ()
    fatal_error: NormalizedError | None = None
    detail: dict[str, JsonValue] = field(default_factory=dict[str, JsonValue])


def build_result(acc: RunAccumulator, facts: RunFacts) -> OperatorResult:
    """The run's `OperatorResult` from the parser's accumulator and the process facts."""
    status, error = _status(acc, facts)
    session = (
        NativeSessionRef(provider=facts.provider, session_id=acc.session_id)
        if acc.session_id
        else None
    )
    notes = list(facts.notes)
    if acc.non_json_lines:
        notes.append(f"{acc.non_json_lines} non-JSON stdout line(s) kept in the raw trace only")
    return OperatorResult(
        run_id=facts.run_id,
        provider=facts.provider,
        status=status,
        session=session,
        final_message=acc.final_message if acc.final_message is not None else acc.last_text,
        artifacts=tuple(acc.artifacts.values()),
        metrics=acc.metrics.to_model(
            tool_calls=max(len(acc.tool_call_ids), acc.reported_tool_calls or 0),
            measured_duration_ms=facts.measured_duration_ms,
        ),
        trace=facts.trace,
        error=error,
        permission_denials=tuple(acc.denials),
        policy=facts.policy,
        attempts=facts.attempts,
        exit_code=facts.exit_code,
        notes=tuple(notes),
    )


def terminal_event(result: OperatorResult) -> Completed | Failed:
    """The stream's last event for a result."""
    session_id = result.session.session_id if result.session else None
    if result.status == "success" or result.error is None:
        return Completed(session_id=session_id, final_message=result.final_message)
    return Failed(status=result.status, error=result.error, session_id=session_id)


def _status(acc: RunAccumulator, facts: RunFacts) -> tuple[RunStatus, NormalizedError | None]:
    if facts.fatal_error is not None:
        return "failed", facts.fatal_error
    if acc.outcome == "success" and not _hollow_success(acc, facts):
        return "success", None
    if facts.stop_reason in ("timeout", "idle_timeout"):
        idle = facts.stop_reason == "idle_timeout"
        message = "the CLI was silent too long" if idle else "the run exceeded its timeout"
        detail: dict[str, JsonValue] = {"idle": idle, **facts.detail}
        return "timeout", NormalizedError(code=ErrorCode.TIMEOUT, message=message, detail=detail)
    if facts.stop_reason == "interrupt":
        error = NormalizedError(
            code=ErrorCode.INTERRUPTED, message="the run was interrupted", detail=facts.detail
        )
        return "interrupted", error
    if facts.exit_code in SIGINT_EXIT_CODES and acc.outcome != "failed":
        message = f"the CLI was stopped by SIGINT (exit code {facts.exit_code})"
        detail = {"exit_code": facts.exit_code, **facts.detail}
        return "interrupted", NormalizedError(
            code=ErrorCode.INTERRUPTED, message=message, detail=detail
        )
    if acc.outcome == "failed" and acc.error is not None:
        return _REPORTED_STATUS.get(acc.error.code, "failed"), acc.error
    if acc.pending_error is not None:
        return "failed", acc.pending_error
    return "failed", _exit_error(facts)


_REPORTED_STATUS: dict[ErrorCode, RunStatus] = {
    ErrorCode.TIMEOUT: "timeout",
    ErrorCode.INTERRUPTED: "interrupted",
}
"""The status of a run whose CLI reported a failure with one of these codes (else `failed`):
a CLI that says its turn timed out, or that it was stopped (Claude Code's aborted result)."""


def _hollow_success(acc: RunAccumulator, facts: RunFacts) -> bool:
    """A reported success the process contradicts: a non-zero exit and no answer at all."""
    answer = acc.final_message if acc.final_message is not None else acc.last_text
    return facts.exit_code not in (None, 0) and not (answer or "").strip()


def _exit_error(facts: RunFacts) -> NormalizedError:
    tail = facts.stderr_tail.strip()
    detail: dict[str, JsonValue] = {"exit_code": facts.exit_code, "stderr_tail": tail[-2000:]}
    if facts.exit_code not in (None, 0):
        summary = stderr_summary(tail)
        message = f"the CLI exited with code {facts.exit_code}" + (
            f": {summary}" if summary else ""
        )
        return NormalizedError(code=ErrorCode.PROCESS_EXITED, message=message, detail=detail)
    return NormalizedError(
        code=ErrorCode.NO_RESULT, message="the CLI ended without reporting a result", detail=detail
    )


def stderr_summary(tail: str) -> str:
    """The most telling stderr line: the last one mentioning an error, else the last line.

    CLIs follow their error with backtraces or progress noise, so the last line alone misleads.
    """
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() and "warning" not in line.lower()]
    if errors:
        return errors[-1][:500]
    return lines[-1][:500] if lines else ""
