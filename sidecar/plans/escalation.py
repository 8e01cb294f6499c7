"""When a task runs out of attempts (or budget), or stalls for good: the author decides
(retry, reassign to another profile, skip, abort the plan), unless the thread is autonomous."""

from __future__ import annotations

from typing import Any

from sidecar.binding.calls import LiveInterruptDropped, current_run
from sidecar.plans.attempt import AttemptResult
from sidecar.plans.deps import PlanDeps
from sidecar.plans.envelope import agent_id
from sidecar.plans.finish import finish_task
from sidecar.plans.profiles import Profile
from sidecar.plans.records import change_task
from sidecar.plans.roster import ranked, reach, roster
from sidecar.store import Store, TaskRecord
from sidecar.turn.questions import EscalationQuestion, Question
from sidecar.turn.state import SubagentInput


async def out_of_attempts(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    profile: Profile,
    *,
    stopped: str,
    result: AttemptResult,
) -> Profile | None:
    """Attempts ran out (or the budget did): the author decides, unless the thread is
    autonomous. Returns the profile to retry with, or None once the task has ended."""
    error = result.error or "ended with work left after every continuation"
    decision = await _escalate(deps, inp, task, reason=stopped, error=error)
    if decision is None:
        finish_task(deps, inp, task, "failed", error=error, result=result)
        return None
    action, new_profile = decision
    if action == "skip":
        finish_task(deps, inp, task, "skipped", error=f"skipped by the author after: {error}")
        return None
    if action == "abort":
        deps.coordinator.abort_plan(task.plan_id)
        finish_task(deps, inp, task, "cancelled", error="the author aborted the plan")
        return None
    if new_profile is not None:
        handoff(deps.store, inp["thread_id"], task, profile, new_profile, reason=error)
        change_task(deps.store, task.plan_id, task.id, profile=new_profile.id)
        return new_profile
    return profile


def _reassignable(deps: PlanDeps, task: TaskRecord) -> list[str]:
    """The profiles the task may be reassigned to: the available ones but its own, best first
    (the roster's ranking), so the dialog's choice starts on the best of them."""
    profiles = deps.profiles()
    current = profiles.get(task.profile)
    needs = reach(current) if current is not None else None
    entries = roster(profiles, deps.coordinator)
    return [
        e.profile.id
        for e in ranked(entries, task.profile, needs=needs)
        if e.profile.id != task.profile
    ]


def handoff(
    store: Store, thread_id: str, task: TaskRecord, old: Profile, new: Profile, *, reason: str
) -> None:
    """The work moves to another profile: recorded as a handoff of the same task (its attempts,
    results and history stay the task's), not as a new task."""
    store.put_envelope(
        f"{task.plan_id}:{task.id}:handoff:{task.attempt}:{new.id}",
        thread_id,
        sender=agent_id(thread_id, task.id),
        receiver=agent_id(thread_id, task.id),
        kind="handoff",
        payload={"from": old.id, "to": new.id, "after_attempts": task.attempt, "reason": reason},
        plan_id=task.plan_id,
        task_id=task.id,
    )


async def ask_author(payload: Question, task: TaskRecord) -> dict[str, Any]:
    """Put `payload` to the author on the task's behalf (its title says which task asks).

    Raises:
        LiveInterruptDropped: no run is there to ask, or the question was dropped.
    """
    run = current_run()
    if run is None:
        raise LiveInterruptDropped("no run to ask")
    body: dict[str, Any] = {**payload, "task_id": task.id}
    body["title"] = f"[{task.title}] {payload['title']}".strip()
    return await run.ask(None, body, None)


async def _escalate(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    *,
    reason: str,
    error: str,
) -> tuple[str, Profile | None] | None:
    """Ask the author what to do with a task out of attempts; None when the thread is
    autonomous (the task fails and the planner may replan)."""
    if deps.store.is_autonomous(inp["thread_id"]):
        return None
    profiles = deps.profiles()
    payload: EscalationQuestion = {
        "kind": "escalation",
        "title": f"Task {task.id} needs you",
        "body": f"{task.title}: {reason} after {task.attempt} attempt(s). {error}",
        "plan_id": task.plan_id,
        "reason": reason if reason in ("stalled", "budget") else "failed",
        "attempts": task.attempt,
        "error": error,
        "profiles": _reassignable(deps, task),
    }
    change_task(deps.store, task.plan_id, task.id, status="waiting", activity="waiting for you")
    answer = await ask_author(payload, task)
    action = str(answer.get("action"))
    chosen = profiles.get(str(answer.get("profile"))) if action == "reassign" else None
    if action == "reassign" and chosen is None:
        return "retry", None
    return action, chosen
