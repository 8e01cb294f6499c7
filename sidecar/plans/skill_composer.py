"""The Skill Composer: an internal subagent (profile `skill-composer`) whose answer is a new
skill, put to the author as a changeset before anything is saved (DESIGN.md §14, §15).

One attempt: the composer runs as any internal subagent; its answer is split into the draft's
files and staged next to the target skills folder (sidecar/plans/skill_draft.py). A draft the
skills catalog would list with errors (bad frontmatter, a wrong name, an oversized body) is
sent back: the attempt fails with those errors, so the retry prompt carries them, within the
profile's `max_attempts`. A draft that passes is offered as a `changeset` interrupt; exactly
the files the author accepts are written (the review gate's apply: atomic, never over a file
the author changed meanwhile); the staging folder is removed either way. The answer is kept
while its review is open, so a sidecar stopped meanwhile offers the same draft on resume.

`/skill new <name> [from plan <id>] [to workspace|account]` starts it (`skill_task`): a
one-task delegation with no planning call, whose objective carries the conversation or the
plan's tasks and results.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from sidecar.plans.attempt import AttemptContext, AttemptResult
from sidecar.plans.deps import PlanDeps
from sidecar.plans.internal import internal_attempt
from sidecar.plans.review.apply import ApplyReport, apply_changes
from sidecar.plans.review.changeset import Changeset, compute_changeset
from sidecar.plans.review.isolation import Isolation, remove_isolation
from sidecar.plans.review.limits import Deadline, ReviewError, ReviewTimeoutError
from sidecar.plans.skill_draft import (
    COMPOSER_PROFILE,
    DraftError,
    Job,
    check_staged,
    composer_objective,
    newest,
    parse_job,
    split_draft,
    stage_draft,
    target_root,
)
from sidecar.store import MessageRecord, PlanRecord, TaskRecord
from sidecar.turn.questions import ChangesetQuestion

T = TypeVar("T")
STEP_SECONDS = 120.0
CONVERSATION_MESSAGES = 200
KEPT_DRAFT = "skill-draft.md"


def is_composer(profile_id: str) -> bool:
    """Whether a profile's tasks are composed skills (the `skill-composer` profile)."""
    return profile_id == COMPOSER_PROFILE


def skill_task(job: Job, material: str) -> dict[str, Any]:
    """The delegation's arguments: one task for the composer profile."""
    return {
        "tasks": [
            {
                "id": "skill",
                "title": f"Compose the skill {job.name}",
                "objective": composer_objective(job, material),
                "profile": COMPOSER_PROFILE,
            }
        ]
    }


def conversation_material(messages: list[MessageRecord]) -> str:
    """The author's and the assistant's messages, oldest first (commands and tool traffic
    left out), cut to the newest part that fits."""
    lines: list[str] = []
    for message in messages:
        text = message.content.strip()
        if message.role not in ("user", "assistant") or not text or message.tool_calls:
            continue
        if message.role == "user" and text.startswith("/"):
            continue
        lines.append(f"{message.role}: {text}")
    if not lines:
        return "(The conversation is empty: write the skill from its name.)"
    return newest("Conversation:\n" + "\n\n".join(lines))


def plan_material(plan: PlanRecord, tasks: list[TaskRecord]) -> str:
    """A plan's goal, then each task's objective, profile, status and result."""
    lines = [f"Plan: {plan.goal} ({plan.status})"]
    for task in tasks:
        lines += [
            "",
            f"Task {task.id}: {task.title} [{task.profile}, {task.status}]",
            f"Objective: {task.objective}",
        ]
        if task.depends_on:
            lines.append("After: " + ", ".join(task.depends_on))
        if task.summary:
            lines.append(f"Result: {task.summary}")
        if task.error:
            lines.append(f"Error: {task.error}")
    return newest("\n".join(lines))


def material_for(deps: PlanDeps, thread_id: str, plan_id: str | None) -> str:
    """What the composer works from: the plan's tasks and results, or the thread's talk.

    Raises:
        DraftError: no such plan.
    """
    if plan_id is None:
        return conversation_material(deps.store.recent_messages(thread_id, CONVERSATION_MESSAGES))
    plan = deps.store.get_plan(plan_id)
    if plan is None:
        raise DraftError(f"no plan {plan_id!r}")
    return plan_material(plan, deps.store.tasks(plan_id))


async def composer_attempt(deps: PlanDeps, ctx: AttemptContext) -> AttemptResult:
    try:
        job = parse_job(ctx.task.objective)
    except DraftError as exc:
        return AttemptResult(status="failed", error=str(exc))
    task_dir = deps.data_dir / "runs" / ctx.task.plan_id / ctx.task.id
    kept = task_dir / KEPT_DRAFT
    result = await _off_loop(lambda _d: kept_draft(kept)) if ctx.mode == "resume" else None
    if result is None:
        result = await internal_attempt(deps, ctx)
        if result.status != "success":
            return result
        summary = result.summary
        await _off_loop(lambda _d: keep_draft(kept, summary))
    try:
        return await _offer(deps, ctx, job, task_dir / "skill", result)
    finally:
        await _off_loop(lambda _d: kept.unlink(missing_ok=True))


def keep_draft(path: Path, answer: str) -> None:
    """Keep the composer's answer while its review is open: a sidecar stopped meanwhile offers
    the same draft again on resume instead of asking the model for another."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text(answer, encoding="utf-8")
    partial.replace(path)


def kept_draft(path: Path) -> AttemptResult | None:
    """The answer `keep_draft` kept, as the composer's result; None when there is none."""
    try:
        return AttemptResult(status="success", summary=path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


async def _offer(
    deps: PlanDeps, ctx: AttemptContext, job: Job, staging: Path, result: AttemptResult
) -> AttemptResult:
    """Stage and check the draft; offer it when it passes, send it back when it does not."""
    root = target_root(job.target, deps.workspace(), deps.data_dir)
    try:
        files = split_draft(result.summary)
        isolation = await _off_loop(lambda d: stage_draft(root, staging, job, files, d))
    except DraftError as exc:
        return _sent_back(result, str(exc))
    except (OSError, ReviewError) as exc:
        return replace(result, status="failed", error=f"the draft could not be staged: {exc}")
    try:
        errors = await _off_loop(lambda _d: check_staged(isolation, job))
        if errors:
            return _sent_back(result, "; ".join(errors))
        return await _review(deps, ctx, job, isolation, result)
    except ReviewError as exc:
        return replace(result, status="failed", error=f"the draft could not be reviewed: {exc}")
    finally:
        await _off_loop(lambda d: _remove(isolation, d))


def _sent_back(result: AttemptResult, errors: str) -> AttemptResult:
    error = (
        f"the draft breaks the skill rules: {errors}. Answer again with the whole corrected "
        "SKILL.md"
    )
    return replace(result, status="failed", error=error, artifacts=())


async def _review(
    deps: PlanDeps, ctx: AttemptContext, job: Job, isolation: Isolation, result: AttemptResult
) -> AttemptResult:
    changes = await _off_loop(lambda d: compute_changeset(isolation, d))
    if not changes.files:
        note = f"The skill {job.name} is already saved exactly as drafted; nothing changed."
        return replace(result, summary=note, artifacts=())
    answer = await ctx.ask(_payload(ctx, job, isolation, changes))
    offered = {f.path for f in changes.files if f.applicable}
    accepted = tuple(p for p in answer.get("accepted") or () if p in offered)
    report = ApplyReport()
    if accepted:
        report = await _off_loop(lambda d: apply_changes(isolation, accepted, d))
    return replace(
        result,
        summary=_describe(job, isolation, changes, report),
        artifacts=tuple(_shown(deps, isolation.workspace / p) for p in report.applied),
    )


def _payload(
    ctx: AttemptContext, job: Job, isolation: Isolation, changes: Changeset
) -> ChangesetQuestion:
    where = "the workspace" if job.target == "workspace" else "your account"
    return {
        "kind": "changeset",
        "title": f"Save the skill {job.name}?",
        "body": (
            f"{ctx.profile.name} drafted the skill {job.name} ({len(changes.files)} file(s)) "
            f"for {where}. Accept the files to save them in {isolation.workspace}."
        ),
        "agent": ctx.profile.name,
        "workspace": str(isolation.workspace),
        "folder": str(isolation.folder),
        "isolation": isolation.kind,
        "files": changes.to_json(),
        "accepted_by_grant": [],
        "summary": f"A new skill, {job.name}, checked against the skill rules.",
    }


def _describe(job: Job, isolation: Isolation, changes: Changeset, report: ApplyReport) -> str:
    if not report.applied:
        lost = f" ({', '.join(report.conflicts)} changed meanwhile)" if report.conflicts else ""
        return f"The skill {job.name} was not saved{lost}: nothing was written."
    parts = [f"Saved the skill {job.name} in {isolation.workspace}: {', '.join(report.applied)}."]
    left = [f.path for f in changes.files if f.path not in report.applied]
    if left:
        parts.append(f"Not saved: {', '.join(left)}.")
    return " ".join(parts)


def _shown(deps: PlanDeps, path: Path) -> str:
    """A saved file as the run tree shows it: relative to the workspace when inside it."""
    try:
        return path.relative_to(deps.workspace()).as_posix()
    except ValueError:
        return str(path)


def _remove(isolation: Isolation, deadline: Deadline) -> None:
    # A staging folder left under the data dir is removed by the next stage.
    with contextlib.suppress(ReviewError):
        remove_isolation(isolation, deadline)


async def _off_loop(step: Callable[[Deadline], T]) -> T:
    """Run a file step in a worker thread under a deadline, so ping and cancel answer."""
    deadline = Deadline(STEP_SECONDS)
    try:
        async with asyncio.timeout(STEP_SECONDS + 10):
            return await asyncio.to_thread(step, deadline)
    except TimeoutError as exc:
        raise ReviewTimeoutError(f"took longer than {STEP_SECONDS:g}s") from exc
