"""A strong-agent subagent (Claude Code, Codex, OpenClaw): one `agent_run` call on the agents
MCP server. Its normalized events arrive as progress and are relayed under the task; a CLI
permission request arrives as an elicitation, which the host turns into a live interrupt named
after the task; cancelling the attempt cancels the call, which stops the CLI.

A strong agent that writes works behind the review gate (`review_gate`, `delegation`): its
dispatch asks the author first unless a grant covers it, its folder is an isolated copy of the
workspace (never the workspace itself), and its changes reach the workspace only as the author
accepts them. A profile with a `fresh` folder works in an empty folder of its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import uuid
from pathlib import Path
from typing import Any, cast

from sidecar.binding.calls import in_flight
from sidecar.host.host import ServerUnavailableError
from sidecar.host.types import ToolOutcome, UnknownToolError
from sidecar.plans import review_gate
from sidecar.plans.attempt import (
    AttemptContext,
    AttemptReport,
    AttemptResult,
    BudgetExceededError,
    FailureClass,
    UsageSoFar,
)
from sidecar.plans.delegation import ask_to_delegate
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import AGENTS_SERVER, Profile
from sidecar.plans.records import change_task
from sidecar.plans.review.limits import ReviewError
from sidecar.store import TaskRecord
from sidecar.turn.events import ToolProgressed

PROVIDERS = {"claude_code": "claude", "codex": "codex", "openclaw": "openclaw"}
_CONTINUE = "Continue the task where you left off, then report its result."


async def strong_attempt(deps: PlanDeps, ctx: AttemptContext) -> AttemptResult:
    if not review_gate.gated(ctx.profile):
        return await _run_agent(deps, ctx, fresh_dir(deps, ctx))
    await ask_to_delegate(deps, ctx)
    reviewed = review_gate.reviewed_result(deps, ctx) if ctx.mode == "resume" else None
    if reviewed is not None:  # the sidecar stopped after the review: its outcome stands
        await review_gate.remove_leftover(deps, ctx)
        return reviewed
    if ctx.mode == "resume" and ctx.task.session_ref is None:
        # Taken up after a restart with no session of its own to go on: it runs again from
        # the start, in a fresh copy (nothing of the stopped run reached the workspace).
        await review_gate.remove_leftover(deps, ctx)
    try:
        isolation = await review_gate.isolate(deps, ctx)
    except ReviewError as exc:
        return AttemptResult(status="failed", error=f"no isolated copy of the workspace: {exc}")
    finished = review_gate.finished_result(deps, ctx) if ctx.mode == "resume" else None
    if finished is not None:  # the sidecar stopped during the review: ask again, run nothing
        return await review_gate.review(deps, ctx, isolation, finished)
    try:
        result = await _run_agent(deps, ctx, isolation.folder)
    except (asyncio.CancelledError, BudgetExceededError):
        if not deps.coordinator.held(ctx.task.plan_id):  # a pause keeps it to go on in
            await review_gate.discard_cancelled(deps, ctx, isolation)
        raise
    if review_gate.is_last(ctx, result):
        review_gate.record_finished(deps, ctx, result)
        return await review_gate.review(deps, ctx, isolation, result)
    return result


async def _run_agent(deps: PlanDeps, ctx: AttemptContext, folder: Path) -> AttemptResult:
    """One `agent_run` call with `folder` as the agent's working directory."""
    task, profile = ctx.task, ctx.profile
    resume = ctx.mode in ("continue", "resume") and task.session_ref is not None
    args: dict[str, Any] = {
        "provider": PROVIDERS[profile.kind],
        "instruction": _CONTINUE if resume else _instruction(deps, ctx),
        "working_dir": str(folder),
        "session": "resume" if resume else "new",
        "timeout_s": profile.timeout,
        "tool_policy": tool_policy(profile),
    }
    if resume:
        args["native_session_id"] = task.session_ref
    if profile.model:
        args["model"] = profile.model

    # Progress arrives on the server session's task: report it in this node's context, where
    # the run's stream writer lives. A budget that runs out on the agent's streamed usage stops
    # the call there and then (the agent's CLI with it), not when the agent ends.
    node_context = contextvars.copy_context()
    over: list[BudgetExceededError] = []
    call: asyncio.Future[ToolOutcome] | None = None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        del progress, total
        report = progress_report(message)
        if report.session_ref is not None:  # a restart resumes this session, not a new one
            node_context.run(
                change_task, deps.store, task.plan_id, task.id, session_ref=report.session_ref
            )
        if report.usage is not None:
            report = _count_usage(ctx, report)
        try:
            node_context.run(ctx.report, report)
            problem = ctx.over_budget() if report.usage is not None else None
            if problem is not None:
                raise BudgetExceededError(problem)
        except BudgetExceededError as exc:
            if not over and call is not None:
                over.append(exc)
                call.cancel()

    call_id = f"{task.plan_id}.{task.id}.{task.attempt}.{ctx.mode}"
    tool = f"{AGENTS_SERVER}__agent_run"
    await deps.host.wait_for_tool(tool)  # just after a start, the server may still be starting
    # The run's id on the agents server, chosen here: the main agent's messages reach it.
    args["run_id"] = uuid.uuid4().hex
    deps.coordinator.agent_run_started(task.plan_id, task.id, args["run_id"])
    try:
        with in_flight(AGENTS_SERVER, call_id):
            call = asyncio.ensure_future(deps.host.call(tool, args, on_progress))
            try:
                outcome = await call
            except asyncio.CancelledError:
                if over and not _cancelling():
                    raise over[0] from None
                raise
    except (UnknownToolError, ServerUnavailableError) as exc:
        return AttemptResult(status="failed", error=f"the agents server is not available: {exc}")
    finally:
        deps.coordinator.agent_run_ended(task.plan_id, task.id)
        if call is not None and not call.done():
            call.cancel()
    return _result(outcome.structured, outcome.text, is_error=outcome.is_error)


def _cancelling() -> bool:
    """Whether this task itself is being cancelled (not only the call it waits on)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _count_usage(ctx: AttemptContext, report: AttemptReport) -> AttemptReport:
    """A strong agent's streamed usage (run totals) becomes the attempt's own, so a stop
    mid-run still counts what it used, and is charged as the attempt's usage so far."""
    usage = report.usage
    assert usage is not None
    ctx.tokens_in, ctx.tokens_out = usage.tokens_in, usage.tokens_out
    if usage.cost is not None:
        ctx.cost = usage.cost
    return report


def tool_policy(profile: Profile) -> dict[str, Any]:
    """The profile's reach as the agents server's tool policy, which each controller maps to
    its CLI's own controls (read-only: Claude Code's permission mode without file edits,
    Codex's `read-only` sandbox); its native allow and deny lists go through as they are."""
    policy: dict[str, Any] = {"mode": "read_only" if profile.read_only else "workspace_write"}
    if profile.native_tools_allowed:
        policy["allowed_tools"] = list(profile.native_tools_allowed)
    if profile.native_tools_denied:
        policy["disallowed_tools"] = list(profile.native_tools_denied)
    return policy


def resumption(task: TaskRecord, profile: Profile) -> str:
    """How a strong agent's task a restart left running is taken up, in a line."""
    if task.session_ref:
        return f"its {profile.name} session {task.session_ref} goes on where it stopped"
    return f"{profile.name} runs it again from the start, in a fresh copy of the workspace"


def _instruction(deps: PlanDeps, ctx: AttemptContext) -> str:
    from sidecar.plans.records import task_prompt

    prompt = task_prompt(deps.store, ctx.task)
    if ctx.mode == "retry" and ctx.previous_error:
        return f"{prompt}\n\nA previous attempt failed: {ctx.previous_error}"
    return prompt


def fresh_dir(deps: PlanDeps, ctx: AttemptContext) -> Path:
    """An empty folder of the task's own (a `fresh` profile): nothing in it reaches the
    workspace, so it needs no review."""
    target = deps.data_dir / "runs" / ctx.task.plan_id / ctx.task.id / "fresh"
    target.mkdir(parents=True, exist_ok=True)
    return target


def progress_report(message: str | None) -> AttemptReport:
    """A strong agent's normalized event (JSON in the progress message) as a report: relayed
    as progress of its agents call, with the event's type as the task's activity."""
    kind = "activity"
    event: dict[str, Any] = {}
    if message:
        try:
            parsed: object = json.loads(message)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            event = cast(dict[str, Any], parsed)
            kind = str(event.get("type", kind))
        else:
            kind = "note"
    progress = ToolProgressed(call_id="agent", progress=0, message=message)
    if kind == "heartbeat" or (kind == "state_hint" and event.get("hint") in _HOST_HINTS):
        # The agents server's own (a beat in the agent's silence, a message it wrote to the
        # agent): no activity of the agent's.
        return AttemptReport(event=progress, heartbeat=True)
    if kind == "usage":
        return AttemptReport(event=progress, usage=_usage(event))
    session = event.get("session_id") if kind == "session_started" else None
    if isinstance(session, str) and session:
        return AttemptReport(activity="session started", event=progress, session_ref=session)
    return AttemptReport(activity=kind.replace("_", " "), event=progress)


_HOST_HINTS = frozenset({"message_sent"})


def _usage(event: dict[str, Any]) -> UsageSoFar:
    """The agents server's `usage` event (the run's totals so far)."""
    tokens_in = _count(event.get("input_tokens"))
    tokens_out = _count(event.get("output_tokens"))
    cost = event.get("cost_usd")
    priced = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return UsageSoFar(tokens_in + tokens_out, priced, tokens_in=tokens_in, tokens_out=tokens_out)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _traces(trace: object) -> tuple[tuple[str, str], ...]:
    """The run's raw and normalized trace files, as the agents server reported them."""
    if not isinstance(trace, dict):
        return ()
    paths = cast(dict[str, Any], trace)
    found = [(what, paths.get(f"{what}_path")) for what in ("raw", "normalized")]
    return tuple((what, str(path)) for what, path in found if isinstance(path, str) and path)


def _result(structured: dict[str, Any] | None, text: str, *, is_error: bool) -> AttemptResult:
    data = structured or {}
    metrics = cast(dict[str, Any], data.get("metrics") or {})
    session = cast(dict[str, Any], data.get("session") or {})
    error = cast(dict[str, Any], data.get("error") or {})
    artifacts = tuple(
        str(a.get("path")) for a in cast(list[dict[str, Any]], data.get("artifacts") or [])
    )
    common: dict[str, Any] = {
        "summary": str(data.get("final_message") or text or ""),
        "artifacts": artifacts,
        "tokens_in": int(metrics.get("input_tokens") or 0),
        "tokens_out": int(metrics.get("output_tokens") or 0),
        "cost": float(metrics.get("cost_usd") or 0.0),
        "session_ref": session.get("session_id"),
        "traces": _traces(data.get("trace")),
    }
    if data.get("status") == "success" and not is_error:
        return AttemptResult(status="success", **common)
    if error.get("code") == "max_turns":
        return AttemptResult(status="incomplete", **common)
    message = str(error.get("message") or text or "the agent run failed")
    code = str(error.get("code") or "")
    detail = cast(dict[str, Any], error.get("detail") or {})
    failure = failure_class(code)
    if failure == "hopeless":
        # The agents server's own message says what is wrong (for a missing CLI, also how to
        # install it); the fix follows it.
        message = f"{message.rstrip('.')}. {_FIXES[code]}."
    wait = detail.get("retry_after_s", detail.get("retry_after"))
    retry_after = float(wait) if isinstance(wait, int | float) and wait > 0 else None
    return AttemptResult(
        status="failed", error=message, failure=failure, retry_after=retry_after, **common
    )


_FIXES = {
    "cli_not_found": "Install it (its message says how), or set its ATRIUM_<NAME>_BIN to "
    "where it is, then retry",
    "auth_failed": "The agent is not signed in (its key or login was refused): sign in with "
    "its CLI or set its API key, then retry",
    "configuration": "The agent's configuration was refused: fix the profile's model or "
    "settings, then retry",
    "model_unreachable": "The agent cannot reach its model: check the network and its CLI's "
    "proxy and endpoint settings, then retry",
}
"""What the author does about a failure no retry can mend, in one line."""


def failure_class(code: str) -> FailureClass:
    """The class of a strong agent's normalized error code (the agents server's `ErrorCode`)."""
    if code in _FIXES:
        return "hopeless"
    if code == "rate_limited":
        return "rate_limited"
    return "transient"
