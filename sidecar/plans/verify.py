"""Checked results: a task's output is checked against its acceptance criteria before the task
counts as done.

A task's `success_criteria` take one of two forms:

- `run: <python source>`: the source (everything after `run:`, any number of lines) runs in the
  sandbox server (`sandbox__run_python`, with its limits); exit code 0 passes, anything else
  fails with the output's tail as the reasons.
- anything else is prose for the verifier: a cheap internal subagent (profile `verifier` when
  the author configured one, else a built-in one with no tools) asked through the same planner
  path as every internal subagent. It answers `PASS` or `FAIL` on its first line, then reasons.

A verifier that does not answer within its profile's timeout, or answers neither PASS nor FAIL,
is a failed check with that reason: a check never hangs the plan. Each check is shown in the run
tree as a `subagent_event` of type `check` (verdict `running`, then `pass` or `fail`).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace
from typing import Any

from sidecar.host.host import ServerUnavailableError
from sidecar.host.types import UnknownToolError
from sidecar.plans.attempt import AttemptContext, AttemptReport, AttemptResult
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import Profile
from sidecar.plans.records import change_task
from sidecar.store import TaskRecord
from sidecar.turn.events import SubagentRelayed, TaskChecked, emit
from sidecar.turn.questions import Question
from sidecar.turn.state import SubagentInput

COMMAND_PREFIX = "run:"
VERIFIER_ID = "verifier"
SANDBOX_TOOL = "sandbox__run_python"
VERIFIER = Profile(
    id=VERIFIER_ID,
    name="Result checker",
    kind="internal",
    tools_allowed=("-",),  # no tools: it reads the result it is given and judges
    timeout=120.0,
    max_attempts=1,
)
CHECK_FAILED = "The check of the result failed:"
_COMMAND_TIMEOUT = 300.0
_TAIL = 2000
_VERDICT = re.compile(r"^[\s*_#>`\"']*(PASS|FAIL)\b[\s*_:.\-—]*(.*)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    reasons: str
    method: str  # "model" or "command"

    def feedback(self) -> str:
        """What the executing agent is told when its result failed the check."""
        return f"{CHECK_FAILED} {self.reasons}"


def criteria_of(task: TaskRecord) -> str:
    return task.success_criteria.strip()


async def check_result(
    deps: PlanDeps, inp: SubagentInput, task: TaskRecord, result: AttemptResult
) -> Verdict | None:
    """Check a finished attempt's result; None when the task has no criteria."""
    criteria = criteria_of(task)
    if not criteria:
        return None
    method = "command" if criteria.startswith(COMMAND_PREFIX) else "model"
    _emit_check(task, method=method, verdict="running", reasons="", criteria=criteria)
    if method == "command":
        verdict = await _command_check(deps, criteria[len(COMMAND_PREFIX) :].strip())
    else:
        verdict = await _model_check(deps, inp, task, result, criteria)
    _emit_check(
        task,
        method=method,
        verdict="pass" if verdict.passed else "fail",
        reasons=verdict.reasons,
        criteria=criteria,
    )
    return verdict


def _emit_check(
    task: TaskRecord, *, method: str, verdict: str, reasons: str, criteria: str
) -> None:
    check = TaskChecked(task.attempt, method, verdict, reasons, criteria)
    emit(SubagentRelayed(task_id=task.id, plan_id=task.plan_id, event=check))


async def _command_check(deps: PlanDeps, code: str) -> Verdict:
    if not code:
        empty = "the check command is empty (write `run: <python source>`)"
        return Verdict(False, empty, "command")
    try:
        outcome = await deps.host.call(SANDBOX_TOOL, {"code": code, "timeout_s": _COMMAND_TIMEOUT})
    except (UnknownToolError, ServerUnavailableError) as exc:
        return Verdict(False, f"the sandbox is not available to run the check: {exc}", "command")
    data: dict[str, Any] = outcome.structured or {}
    exit_code = data.get("exit_code")
    if not outcome.is_error and exit_code == 0 and not data.get("timed_out"):
        return Verdict(True, "the check command exited with code 0", "command")
    tail = (str(data.get("stderr") or "") or str(data.get("stdout") or "") or outcome.text)[-_TAIL:]
    if data.get("timed_out"):
        head = "the check command timed out"
    elif exit_code is not None:
        head = f"the check command exited with code {exit_code}"
    else:
        head = "the check command could not run"
    return Verdict(False, f"{head}: {tail.strip()}" if tail.strip() else head, "command")


async def _model_check(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    result: AttemptResult,
    criteria: str,
) -> Verdict:
    from sidecar.plans.internal import internal_attempt

    profile = deps.profiles().get(VERIFIER_ID) or VERIFIER
    if profile.kind != "internal":
        profile = VERIFIER
    check_task = replace(
        task,
        id=f"{task.id}.check{task.attempt}",
        title=f"Check the result of {task.id}",
        objective=verifier_prompt(task, result, criteria),
        depends_on=(),
        success_criteria="",
        sub_thread_id=None,
        session_ref=None,
        profile=profile.id,
    )

    async def ask(payload: Question) -> dict[str, Any]:
        del payload
        raise RuntimeError("a verifier may not ask the author")

    ctx = AttemptContext(
        inp["thread_id"], check_task, profile, inp["depth"] + 1, "start", None, _quiet, ask
    )
    try:
        async with asyncio.timeout(profile.timeout):
            answer = await internal_attempt(deps, ctx)
    except TimeoutError:
        return Verdict(False, f"the verifier did not answer within {profile.timeout:g}s", "model")
    except Exception as exc:  # the check boundary: a broken verifier is a failed check
        return Verdict(False, f"the verifier failed: {type(exc).__name__}: {exc}", "model")
    finally:
        _count_usage(deps, task, ctx)
    return parse_verdict(answer.summary)


def _count_usage(deps: PlanDeps, task: TaskRecord, ctx: AttemptContext) -> None:
    """The verifier's tokens count towards the task (and so its plan's budget)."""
    fresh = deps.store.get_task(task.plan_id, task.id)
    if fresh is None or not (ctx.tokens_in or ctx.tokens_out):
        return
    change_task(
        deps.store,
        task.plan_id,
        task.id,
        tokens_in=fresh.tokens_in + ctx.tokens_in,
        tokens_out=fresh.tokens_out + ctx.tokens_out,
    )


def _quiet(report: AttemptReport) -> None:
    del report  # the verifier's own steps stay out of the run tree; its verdict is shown


def verifier_prompt(task: TaskRecord, result: AttemptResult, criteria: str) -> str:
    lines = [
        "Check whether a finished task's result meets its acceptance criteria.",
        "",
        f"Title: {task.title}",
        f"Objective: {task.objective}",
        f"Acceptance criteria: {criteria}",
        "",
        "The result:",
        result.summary or "(no result text)",
    ]
    if result.artifacts:
        lines += ["", "Files it changed: " + ", ".join(result.artifacts)]
    lines += [
        "",
        "Answer PASS on the first line if the result meets every criterion, else FAIL; "
        "then give the reasons, one per line.",
    ]
    return "\n".join(lines)


def parse_verdict(answer: str) -> Verdict:
    """A verifier's answer: PASS or FAIL on its first non-empty line, reasons after it."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return Verdict(False, "the verifier gave an empty answer", "model")
    match = _VERDICT.match(lines[0])
    if match is None:
        return Verdict(
            False, f"the verifier answered neither PASS nor FAIL: {answer.strip()[:_TAIL]}", "model"
        )
    reasons = "\n".join([match.group(2).strip(), *lines[1:]]).strip()
    passed = match.group(1).upper() == "PASS"
    if not reasons:
        reasons = "the result meets the criteria" if passed else "no reason given"
    return Verdict(passed, reasons[:_TAIL], "model")
