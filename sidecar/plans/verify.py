"""Checked results: a task's output is checked against its acceptance criteria before the task
counts as done.

A task's `success_criteria` take one of two forms:

- `run: <python source>`: the source (everything after `run:`, any number of lines) runs in the
  sandbox server (`sandbox__run_python`, with its limits); exit code 0 passes, anything else
  fails with the output's tail as the reasons.
- `review by <profile>: <what to look for>`: a review by another agent (an internal profile,
  with its own tools and model). The draft and the review travel as envelopes: the writer's
  draft (`artifact`, replying to the review before it) to the reviewer, the reviewer's verdict
  and comments (`review`, replying to the draft) back. A rejection is revised in the writer's
  own session with the comments, until the reviewer approves or the writer's attempts (its
  rounds) run out; every draft and comment is kept in the outbox.
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
from sidecar.plans.envelope import agent_id
from sidecar.plans.profiles import Profile
from sidecar.plans.records import change_task
from sidecar.plans.report import TASK_WRONG_MARK
from sidecar.store import Store, TaskRecord
from sidecar.turn.events import SubagentRelayed, TaskChecked, emit
from sidecar.turn.questions import Question
from sidecar.turn.state import SubagentInput

COMMAND_PREFIX = "run:"
REVIEW = re.compile(r"^review by ([A-Za-z0-9_.-]+)\s*:\s*(.*)$", re.DOTALL | re.IGNORECASE)
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
TASK_WRONG = f"{TASK_WRONG_MARK}, so the plan must change:"
_COMMAND_TIMEOUT = 300.0
_TAIL = 2000
_VERDICT = re.compile(
    r"^[\s*_#>`\"']*(PASS|FAIL|APPROVE|REJECT|TASK[ _]WRONG)(?:ED|D)?\b[\s*_:.\-—]*(.*)$",
    re.IGNORECASE,
)
_PASSES = frozenset({"PASS", "APPROVE"})


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    reasons: str
    method: str  # "model" or "command"
    task_wrong: bool = False
    """The checker says the task itself cannot be done as written (its criteria contradict its
    objective, or it asks for something impossible or wrong): no revision can pass it, the plan
    must change."""

    def feedback(self) -> str:
        """What the executing agent is told when its result failed the check."""
        if self.task_wrong:
            return f"{TASK_WRONG} {self.reasons}"
        if self.method == "review":
            return f"{CHECK_FAILED} the reviewer asks for changes:\n{self.reasons}"
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
    review = REVIEW.match(criteria)
    method = "command" if criteria.startswith(COMMAND_PREFIX) else "review" if review else "model"
    _emit_check(task, method=method, verdict="running", reasons="", criteria=criteria)
    if method == "command":
        verdict = await _command_check(deps, criteria[len(COMMAND_PREFIX) :].strip())
    elif review is not None:
        verdict = await _review(
            deps, inp, task, result, reviewer_id=review.group(1), looks_for=review.group(2)
        )
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


async def _review(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    result: AttemptResult,
    *,
    reviewer_id: str,
    looks_for: str,
) -> Verdict:
    """One round of review: the draft goes to the reviewer, its verdict comes back."""
    reviewer = deps.profiles().get(reviewer_id)
    if reviewer is None or reviewer.kind != "internal":
        why = "is not configured" if reviewer is None else "is not an internal agent"
        return Verdict(False, f"the reviewer profile {reviewer_id!r} {why}", "review")
    draft = post_draft(deps.store, inp["thread_id"], task, result.summary)
    prompt = reviewer_prompt(task, result, looks_for)
    answer = await _ask_checker(deps, inp, task, reviewer, prompt=prompt, role="review")
    verdict = answer if answer.method != "model" else replace(answer, method="review")
    post_review(deps.store, inp["thread_id"], task, verdict, reply_to=draft)
    return verdict


async def _model_check(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    result: AttemptResult,
    criteria: str,
) -> Verdict:
    profile = deps.profiles().get(VERIFIER_ID) or VERIFIER
    if profile.kind != "internal":
        profile = VERIFIER
    prompt = verifier_prompt(task, result, criteria)
    return await _ask_checker(deps, inp, task, profile, prompt=prompt, role="check")


async def _ask_checker(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    profile: Profile,
    *,
    prompt: str,
    role: str,
) -> Verdict:
    """Run a checking agent (the verifier, or a reviewer) on `prompt` and read its verdict."""
    from sidecar.plans.internal import internal_attempt

    check_task = replace(
        task,
        id=f"{task.id}.{role}{task.attempt}",
        title=f"{role.capitalize()} the result of {task.id}",
        objective=prompt,
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
        "then give the reasons, one per line. If the task itself cannot be done as written "
        "(its criteria contradict its objective, or it asks for something impossible or "
        "wrong), answer TASK_WRONG on the first line and say why: the plan must change.",
    ]
    return "\n".join(lines)


def reviewer_prompt(task: TaskRecord, result: AttemptResult, looks_for: str) -> str:
    lines = [
        "Review a draft another agent wrote, as its reviewer.",
        "",
        f"Title: {task.title}",
        f"What the draft must do: {task.objective}",
        f"What you look for: {looks_for or 'that it does what it must, clearly and correctly'}",
        f"Round: {task.attempt}",
        "",
        "The draft:",
        result.summary or "(no draft text)",
    ]
    if result.artifacts:
        lines += ["", "Files it changed: " + ", ".join(result.artifacts)]
    lines += [
        "",
        "Answer APPROVE on the first line if it is ready, else REJECT; then your comments, one "
        "per line, each saying what to change.",
    ]
    return "\n".join(lines)


def _reviewer(thread_id: str, task: TaskRecord) -> str:
    return f"{agent_id(thread_id, task.id)}/reviewer"


def post_draft(store: Store, thread_id: str, task: TaskRecord, text: str) -> str:
    """The writer's draft of this round, to the reviewer (replying to the last review)."""
    draft = f"{task.plan_id}:{task.id}:draft:{task.attempt}"
    previous = f"{task.plan_id}:{task.id}:review:{task.attempt - 1}"
    store.put_envelope(
        draft,
        thread_id,
        sender=agent_id(thread_id, task.id),
        receiver=_reviewer(thread_id, task),
        kind="artifact",
        payload={"round": task.attempt, "text": text},
        plan_id=task.plan_id,
        task_id=task.id,
        reply_to=previous if task.attempt > 1 and store.has_envelope(previous) else None,
    )
    return draft


def post_review(
    store: Store, thread_id: str, task: TaskRecord, verdict: Verdict, *, reply_to: str
) -> None:
    """The reviewer's verdict and comments on this round's draft, back to the writer."""
    store.put_envelope(
        f"{task.plan_id}:{task.id}:review:{task.attempt}",
        thread_id,
        sender=_reviewer(thread_id, task),
        receiver=agent_id(thread_id, task.id),
        kind="review",
        payload={
            "round": task.attempt,
            "verdict": "approve" if verdict.passed else "reject",
            "comments": verdict.reasons,
        },
        plan_id=task.plan_id,
        task_id=task.id,
        reply_to=reply_to,
    )


def parse_verdict(answer: str) -> Verdict:
    """A checker's answer: PASS or FAIL (a reviewer's APPROVE or REJECT) on its first
    non-empty line, reasons after it."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return Verdict(False, "the verifier gave an empty answer", "model")
    match = _VERDICT.match(lines[0])
    if match is None:
        return Verdict(
            False, f"the verifier answered neither PASS nor FAIL: {answer.strip()[:_TAIL]}", "model"
        )
    reasons = "\n".join([match.group(2).strip(), *lines[1:]]).strip()
    word = match.group(1).upper().replace(" ", "_")
    passed = word in _PASSES
    if not reasons:
        reasons = "the result meets the criteria" if passed else "no reason given"
    return Verdict(passed, reasons[:_TAIL], "model", task_wrong=word == "TASK_WRONG")
