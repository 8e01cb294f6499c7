"""Delegation asks first (DESIGN.md §15): dispatching a strong agent that writes is itself a
write, so the author is asked (agent, objective, permissions, folder) unless a grant covers it:
a grant for this thread or every thread (`agents__agent_run`), or the grant an approved plan
minted for this task. The answer is journaled under the task, so its retries and continuations
do not ask again. Approving a plan mints those task grants (`mint_for_plan`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from sidecar.json_value import JsonObject
from sidecar.plans.attempt import AttemptContext
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import AGENTS_SERVER, Profile
from sidecar.plans.review_gate import DISPATCH_TOOL, gated
from sidecar.store import Store, TaskRecord
from sidecar.store.plan_grants import PlanGrant
from sidecar.turn.questions import ApprovalQuestion

log = logging.getLogger(__name__)

PERMISSIONS = (
    "workspace_write, in an isolated copy of the folder: nothing reaches the folder until you "
    "accept its changes file by file"
)
_ALLOWED = ("allow_once", "allow_thread", "allow_always")


async def ask_to_delegate(deps: PlanDeps, ctx: AttemptContext) -> None:
    """Return once the dispatch is allowed. A refusal cancels the task (the author's no is not a
    failure to retry)."""
    store, task = deps.store, ctx.task
    if _covered(store, ctx):
        return
    key = f"{ctx.parent_thread_id}:delegate:{task.plan_id}.{task.id}"
    entry = store.journal_entry(key)
    if entry is not None and entry.result is not None and entry.result.get("decision") in _ALLOWED:
        return
    answer = await ctx.ask(_payload(deps, ctx))
    decision = str(answer.get("decision"))
    # Recorded once answered (never an open intent while the author decides: a crash then
    # simply asks again, and crash recovery has no half-made call to put to the author).
    with store.transaction():
        store.journal_intent(key, ctx.parent_thread_id, AGENTS_SERVER, DISPATCH_TOOL, {})
        store.journal_result(key, {"decision": decision, "reason": answer.get("reason")})
    if decision == "allow_thread":
        store.add_grant(ctx.parent_thread_id, AGENTS_SERVER, DISPATCH_TOOL)
    elif decision == "allow_always":
        store.add_standing_grant(AGENTS_SERVER, DISPATCH_TOOL)
    elif decision not in _ALLOWED:
        deps.coordinator.cancel_task(task.plan_id, task.id)
        await asyncio.sleep(0)  # the cancel lands here
        raise asyncio.CancelledError


def _covered(store: Store, ctx: AttemptContext) -> bool:
    task = ctx.task
    if store.has_grant(ctx.parent_thread_id, AGENTS_SERVER, DISPATCH_TOOL):
        return True
    return store.plan_grant(task.plan_id, task.id, AGENTS_SERVER, DISPATCH_TOOL) is not None


def _payload(deps: PlanDeps, ctx: AttemptContext) -> ApprovalQuestion:
    profile, task = ctx.profile, ctx.task
    folder = str(deps.workspace())
    arguments: JsonObject = {
        "agent": profile.name,
        "kind": profile.kind,
        "objective": task.objective,
        "permissions": PERMISSIONS,
        "folder": folder,
    }
    return {
        "kind": "approval",
        "title": f"Let {profile.name} work on this task?",
        "body": (
            f"{profile.name} ({profile.kind}) would work on: {task.title}. It gets "
            f"{PERMISSIONS} ({folder})."
        ),
        "server": AGENTS_SERVER,
        "tool": DISPATCH_TOOL,
        "arguments": arguments,
        "call_id": f"{task.plan_id}.{task.id}.delegate",
    }


def mint_for_plan(
    store: Store,
    plan_id: str,
    tasks: Iterable[TaskRecord],
    profiles: Mapping[str, Profile],
    accept_paths: object,
) -> list[PlanGrant]:
    """The author approved the plan: each open task that dispatches a writing strong agent
    gets a grant for it, accepting its changes inside `accept_paths` (checked: relative paths
    inside the workspace; others are left out and logged)."""
    paths = _clean_paths(accept_paths)
    grants = [
        PlanGrant(plan_id, t.id, AGENTS_SERVER, DISPATCH_TOOL, paths, 0.0)
        for t in tasks
        if not t.final and t.profile in profiles and gated(profiles[t.profile])
    ]
    store.mint_plan_grants(plan_id, grants)
    return grants


def _clean_paths(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list | tuple):
        return ()
    kept: list[str] = []
    for item in raw:  # pyright: ignore[reportUnknownVariableType]
        text = str(item).strip().replace("\\", "/")  # pyright: ignore[reportUnknownArgumentType]
        pure = PurePosixPath(text)
        if not text or pure.is_absolute() or ".." in pure.parts or ".git" in pure.parts:
            log.warning("plan grant path %r left out: not a path inside the workspace", text)
            continue
        cleaned = pure.as_posix().strip("/") or "."
        if cleaned not in kept:
            kept.append(cleaned)
    return tuple(kept)
