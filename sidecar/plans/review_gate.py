"""The review gate around a writing strong agent's task (DESIGN.md §15), in the graph's terms.

The task's isolated copy is made before its first attempt and kept across its retries and
continuations (the agent picks up its own work). Before the agent starts, the copy is given the
skills its profile allows (`agent_skills`); they never come back as changes. When the task is
done (success, or the last attempt failed), its changeset is computed; files inside the paths the
plan's grant accepts are applied at once; the rest goes to the author as a `changeset`
interrupt, and exactly the files accepted there are applied. Then the copy is removed. A
cancelled attempt removes its copy and applies nothing.

Making, applying and removing are journaled (intent before, result after) under the task's
thread, and every step runs off the event loop under a deadline, so ping and cancel answer
while git or a large copy works.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from sidecar.plans.agent_skills import give_skills, load_placement
from sidecar.plans.attempt import AttemptContext, AttemptReport, AttemptResult
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import AGENTS_SERVER, Profile
from sidecar.plans.review.apply import ApplyReport, apply_changes
from sidecar.plans.review.changeset import Changeset, FileChange, compute_changeset
from sidecar.plans.review.isolation import (
    Isolation,
    create_isolation,
    load_isolation,
    remove_isolation,
)
from sidecar.plans.review.limits import Deadline, ReviewError, ReviewTimeoutError
from sidecar.store.undo_watch import watch_files
from sidecar.turn.questions import ChangesetQuestion

log = logging.getLogger(__name__)

T = TypeVar("T")
STEP_SECONDS = 300.0
"""Deadline of one step (making the copy, computing the changeset, applying, removing)."""
DISPATCH_TOOL = "agent_run"
_JOURNAL_SERVER = "atrium"
_background: set[asyncio.Task[None]] = set()


def gated(profile: Profile) -> bool:
    """Whether the profile's agent writes from the workspace, and so works behind the gate
    (a `fresh` folder starts empty and never reaches the workspace)."""
    return profile.strong and profile.workdir != "fresh"


def isolation_root(deps: PlanDeps, ctx: AttemptContext) -> Path:
    return deps.data_dir / "runs" / ctx.task.plan_id / ctx.task.id


async def isolate(deps: PlanDeps, ctx: AttemptContext) -> Isolation:
    """The task's isolated copy: found again if an earlier attempt made it, else made now.

    Raises:
        ReviewError: it could not be made (the message says why).
    """
    root = isolation_root(deps, ctx)
    found = await _off_loop(lambda _deadline: load_isolation(root), STEP_SECONDS)
    isolation = found if found is not None else await _make(deps, ctx, root)
    account = deps.data_dir / "skills"
    placement = await _off_loop(
        lambda d: give_skills(isolation, ctx.profile, account, d), STEP_SECONDS
    )
    if placement is not None:
        ctx.report(AttemptReport(activity=placement.activity()))
    return isolation


async def _make(deps: PlanDeps, ctx: AttemptContext, root: Path) -> Isolation:
    workspace = deps.workspace()
    arguments = {"workspace": str(workspace), "folder": str(root)}
    key = _journal(deps, ctx, f"isolate.{ctx.task.attempt}", "isolate", arguments)
    try:
        made = await _off_loop(lambda d: create_isolation(workspace, root, d), STEP_SECONDS)
    except ReviewError as exc:
        deps.store.journal_result(key, {"error": str(exc)})
        raise
    deps.store.journal_result(key, made.to_json())
    return made


def record_finished(deps: PlanDeps, ctx: AttemptContext, result: AttemptResult) -> None:
    """The agent is done and its review begins: record its result, so a sidecar that stops
    during the review asks again on resume instead of running the agent again."""
    _store_result(deps, ctx, "done", result)


def finished_result(deps: PlanDeps, ctx: AttemptContext) -> AttemptResult | None:
    """The result `record_finished` kept for this attempt, if its review never ended."""
    return _stored_result(deps, ctx, "done")


def reviewed_result(deps: PlanDeps, ctx: AttemptContext) -> AttemptResult | None:
    """The attempt's result once its review ended (what was applied, rejected, in conflict):
    a sidecar that stopped after the review returns it instead of reviewing again."""
    return _stored_result(deps, ctx, "reviewed")


async def remove_leftover(deps: PlanDeps, ctx: AttemptContext) -> None:
    """Remove the task's copy if a stop after its review left it behind."""
    root = isolation_root(deps, ctx)
    found = await _off_loop(lambda _deadline: load_isolation(root), STEP_SECONDS)
    if found is not None:
        await discard(deps, ctx, found)


def _store_result(deps: PlanDeps, ctx: AttemptContext, step: str, result: AttemptResult) -> None:
    key = _key(ctx, f"{step}.{ctx.task.attempt}")
    data = {**asdict(result), "artifacts": list(result.artifacts)}
    with deps.store.transaction():
        deps.store.journal_intent(key, ctx.parent_thread_id, _JOURNAL_SERVER, f"review_{step}", {})
        deps.store.journal_result(key, data)


def _stored_result(deps: PlanDeps, ctx: AttemptContext, step: str) -> AttemptResult | None:
    entry = deps.store.journal_entry(_key(ctx, f"{step}.{ctx.task.attempt}"))
    if entry is None or entry.result is None:
        return None
    data = dict(entry.result)
    data["artifacts"] = tuple(data.get("artifacts") or ())
    data["traces"] = tuple(tuple(pair) for pair in data.get("traces") or ())  # JSON gave lists
    return AttemptResult(**data)


def is_last(ctx: AttemptContext, result: AttemptResult) -> bool:
    """Whether this attempt's end is the task's: success, or a failure with no retry left."""
    if result.status == "success":
        return True
    return result.status == "failed" and ctx.task.attempt >= ctx.profile.max_attempts


async def review(
    deps: PlanDeps, ctx: AttemptContext, isolation: Isolation, result: AttemptResult
) -> AttemptResult:
    """Put the task's changes to the author, apply what is accepted, remove the copy; the
    result says what happened to each file (and lists the applied ones as artifacts)."""
    try:
        changes = await _off_loop(lambda d: compute_changeset(isolation, d), STEP_SECONDS)
        outcome = await _decide_and_apply(deps, ctx, isolation, changes, result.summary)
    except ReviewError as exc:
        note = f"The changes could not be reviewed ({exc}); nothing was applied."
        reviewed = replace(result, summary=_join(result.summary, note), artifacts=())
    else:
        summary = _join(result.summary, outcome.describe())
        reviewed = replace(result, summary=summary, artifacts=outcome.applied)
    placement = load_placement(isolation)
    if placement is not None and placement.notes():
        reviewed = replace(reviewed, summary=_join(reviewed.summary, placement.notes()))
    _store_result(deps, ctx, "reviewed", reviewed)
    await discard(deps, ctx, isolation)
    return reviewed


async def discard(deps: PlanDeps, ctx: AttemptContext, isolation: Isolation) -> None:
    """Remove the copy (journaled); a failure to remove is logged, never raised."""
    key = _journal(deps, ctx, f"remove.{ctx.task.attempt}", "remove", isolation.to_json())
    try:
        await _off_loop(lambda d: remove_isolation(isolation, d), STEP_SECONDS)
    except ReviewError as exc:
        log.warning("could not remove %s: %s", isolation.root, exc)
        deps.store.journal_result(key, {"error": str(exc)})
        return
    deps.store.journal_result(key, {"removed": True})


async def discard_cancelled(deps: PlanDeps, ctx: AttemptContext, isolation: Isolation) -> None:
    """Remove the copy of a cancelled attempt: awaited, and shielded so that a second cancel
    stops only the wait, never the removal."""
    task = asyncio.ensure_future(discard(deps, ctx, isolation))
    _background.add(task)
    task.add_done_callback(_background.discard)
    await asyncio.shield(task)


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    applied: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()
    by_grant: tuple[str, ...] = ()

    def describe(self) -> str:
        if not (self.applied or self.rejected or self.conflicts or self.refused):
            return "The agent changed no files."
        parts: list[str] = []
        if self.applied:
            granted = (
                f" ({len(self.by_grant)} accepted by the plan's grant)" if self.by_grant else ""
            )
            parts.append(f"Applied to the workspace{granted}: {', '.join(self.applied)}.")
        if self.rejected:
            parts.append(f"Rejected by the author (not applied): {', '.join(self.rejected)}.")
        if self.conflicts:
            names = ", ".join(self.conflicts)
            parts.append(f"Conflicts (changed in the workspace meanwhile; not applied): {names}.")
        for path, why in self.refused:
            parts.append(f"Not applied: {path} ({why}).")
        return " ".join(parts)


async def _decide_and_apply(
    deps: PlanDeps, ctx: AttemptContext, isolation: Isolation, changes: Changeset, summary: str
) -> ReviewOutcome:
    if not changes.files:
        return ReviewOutcome()
    grant = deps.store.plan_grant(ctx.task.plan_id, ctx.task.id, AGENTS_SERVER, DISPATCH_TOOL)
    by_grant = tuple(
        f.path
        for f in changes.files
        if _applicable(f) and inside(f.path, grant.paths if grant else ())
    )
    granted = await _apply(deps, ctx, isolation, by_grant, step="apply-grant")
    asked = [f for f in changes.files if f.path not in by_grant]
    accepted: tuple[str, ...] = ()
    if asked:
        payload = _changeset_payload(
            deps, ctx, isolation, asked, by_grant=granted.applied, summary=summary
        )
        answer = await ctx.ask(payload)
        offered = {f.path for f in asked if _applicable(f)}
        accepted = tuple(p for p in answer.get("accepted") or () if p in offered)
    chosen = await _apply(deps, ctx, isolation, accepted, step="apply")
    report = ApplyReport(
        (*granted.applied, *chosen.applied),
        (*granted.conflicts, *chosen.conflicts),
        (*granted.refused, *chosen.refused),
    )
    rejected = tuple(f.path for f in asked if _applicable(f) and f.path not in accepted)
    conflicts = tuple(dict.fromkeys((*(f.path for f in asked if f.conflict), *report.conflicts)))
    unapplicable = tuple(
        (f.path, f.note or "") for f in asked if not _applicable(f) and not f.conflict
    )
    return ReviewOutcome(
        applied=report.applied,
        rejected=rejected,
        conflicts=conflicts,
        refused=(*unapplicable, *report.refused),
        by_grant=granted.applied,
    )


async def _apply(
    deps: PlanDeps,
    ctx: AttemptContext,
    isolation: Isolation,
    paths: tuple[str, ...],
    *,
    step: str,
) -> ApplyReport:
    if not paths:
        return ApplyReport()
    key = _journal(deps, ctx, f"{step}.{ctx.task.attempt}", "apply", {"accepted": list(paths)})
    # Undo: the accepted files' before- and after-images (sidecar.store.undo_watch).
    watch = await watch_files(
        deps.store.db, ctx.parent_thread_id, isolation.workspace, paths, source="review_gate"
    )
    report = await _off_loop(lambda d: apply_changes(isolation, paths, d), STEP_SECONDS)
    deps.store.journal_result(key, report.to_json())
    if watch is not None:
        await watch.done(report.applied)
    return report


def _changeset_payload(
    deps: PlanDeps,
    ctx: AttemptContext,
    isolation: Isolation,
    files: list[FileChange],
    *,
    by_grant: tuple[str, ...],
    summary: str,
) -> ChangesetQuestion:
    conflicts = sum(1 for f in files if f.conflict)
    body = f"{ctx.profile.name} changed {len(files)} file(s) in its copy of the workspace."
    if conflicts:
        body += f" {conflicts} changed in your workspace meanwhile and cannot be applied."
    return {
        "kind": "changeset",
        "title": "Review the changes",
        "body": body,
        "agent": ctx.profile.name,
        "workspace": str(deps.workspace()),
        "folder": str(isolation.folder),
        "isolation": isolation.kind,
        "files": [f.to_json() for f in files],
        "accepted_by_grant": list(by_grant),
        "summary": summary[:4000],
    }


def _applicable(change: FileChange) -> bool:
    return change.applicable


def inside(path: str, roots: tuple[str, ...]) -> bool:
    """Whether `path` is one of `roots` or inside one, by whole folder names ("." is all)."""
    parts = PurePosixPath(path).parts
    for root in roots:
        if root == ".":
            return True  # the author accepted changes anywhere in the workspace
        prefix = PurePosixPath(root.strip("/")).parts
        if prefix and parts[: len(prefix)] == prefix:
            return True
    return False


def _key(ctx: AttemptContext, step: str) -> str:
    task = ctx.task
    return f"{ctx.parent_thread_id}:review:{task.plan_id}.{task.id}.{step}"


def _journal(
    deps: PlanDeps, ctx: AttemptContext, step: str, tool: str, arguments: dict[str, Any]
) -> str:
    key = _key(ctx, step)
    deps.store.journal_intent(
        key, ctx.parent_thread_id, _JOURNAL_SERVER, f"review_{tool}", arguments
    )
    return key


def _join(summary: str, note: str) -> str:
    return f"{summary}\n\n{note}" if summary else note


async def _off_loop(step: Callable[[Deadline], T], seconds: float) -> T:
    """Run a blocking step in a worker thread under a deadline it checks itself; the wait is
    bounded too, in case the step is stuck where it cannot check.

    Raises:
        ReviewTimeoutError: past the deadline.
    """
    deadline = Deadline(seconds)
    try:
        async with asyncio.timeout(seconds + 10):
            return await asyncio.to_thread(step, deadline)
    except TimeoutError as exc:
        raise ReviewTimeoutError(f"took longer than {seconds:g}s") from exc
