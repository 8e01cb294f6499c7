"""dispatch: hand tasks to subagents and bring their results back.

Phases (the `dispatch_phase` field):

- `plan`: the planner called `atrium__delegate` or `atrium__plan`. Validate the DAG (an invalid
  one goes back to the planner as the call's error result), store it (a replan bumps the plan's
  version and keeps completed tasks), and for a plan ask the author's approval unless the thread
  is autonomous (`plan_approval` interrupt: approve as is or edited, or reject).
- `run`: the edge after this node fans out with `Send`: one `subagent` per open task, all in
  one step; each waits for its dependencies and its profile's slot itself, so ready tasks start
  the moment they are ready.
- `join`: every subagent has ended. Their envelopes are read from the outbox, the call's result
  is written to the conversation (once, by id), then the envelopes are acknowledged. A sidecar
  killed in between redoes the join on resume and writes nothing twice.
- `start`: continue a plan in a new run (`task/retry`): straight to `run`.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.types import Send, interrupt

from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.tool import record_call, record_result
from sidecar.host.types import ToolOutcome
from sidecar.plans.dag import (
    MAX_DELEGATED,
    MAX_TASKS,
    PlanError,
    validate_plan,
)
from sidecar.plans.delegation import mint_for_plan
from sidecar.plans.plan_budget import parse_budget, record_budget
from sidecar.plans.planner_tools import plan_request
from sidecar.plans.records import emit_plan
from sidecar.plans.routines import approve_instance, approved_instance
from sidecar.plans.runner import run_task
from sidecar.plans.shapes import completed_specs, task_spec, validate_edit
from sidecar.store import PlanRecord, Store, TaskRecord
from sidecar.turn.events import ToolCalled, emit
from sidecar.turn.questions import PlanApprovalQuestion
from sidecar.turn.state import SubagentInput, ToolCallEntry, TurnState


def make_dispatch(deps: GraphDeps):
    async def dispatch(state: TurnState) -> dict[str, Any]:
        phase = state.get("dispatch_phase")
        if phase == "plan":
            return _propose(deps, state)
        if phase == "start":
            return {"dispatch_phase": "run"}
        return _join(deps, state)

    return dispatch


def make_fan_out(deps: GraphDeps):
    def fan_out(state: TurnState) -> list[Send] | str:
        plan_id = state.get("dispatching")
        if state.get("dispatch_phase") != "run" or not plan_id:
            return "planner"
        open_tasks = [t for t in deps.store.tasks(plan_id) if not t.final]
        if not open_tasks:
            return "dispatch"
        depth = int((state.get("agent") or {}).get("depth", 0)) + 1
        return [
            Send(
                "subagent",
                SubagentInput(
                    thread_id=state["thread_id"], plan_id=plan_id, task_id=t.id, depth=depth
                ),
            )
            for t in open_tasks
        ]

    return fan_out


def make_subagent(deps: GraphDeps):
    async def subagent(state: SubagentInput) -> dict[str, Any]:
        await run_task(deps, state)
        return {"dispatch_phase": "join"}

    return subagent


def _propose(deps: GraphDeps, state: TurnState) -> dict[str, Any]:
    store, thread_id = deps.store, state["thread_id"]
    call = state.get("plan_call")
    if call is None:
        raise RuntimeError("a plan is proposed only after the planner chose one")
    record_call(store, thread_id, call)
    emit(ToolCalled(call["id"], "atrium", call["name"][8:], call["arguments"]))
    try:
        plan_id, request = _store_plan(deps, state, call)
    except PlanError as exc:
        return _call_result(
            store, state, call, ToolOutcome(is_error=True, text=f"Invalid plan: {exc}")
        )
    routine = _routine_of(call)
    approved_routine = routine is not None and approved_instance(
        deps.workspace(), routine[0], routine[1], request.goal, request.tasks
    )
    if request.needs_approval and not store.is_autonomous(thread_id) and not approved_routine:
        answer = interrupt(_approval_payload(deps, plan_id))
        if answer.get("decision") != "approve":
            store.set_plan_status(plan_id, "rejected")
            emit_plan(store, plan_id)
            reason = answer.get("reason")
            text = "The author rejected the plan." + (f" Reason: {reason}" if reason else "")
            return _call_result(store, state, call, ToolOutcome(is_error=True, text=text))
        if answer.get("tasks"):
            plan = store.get_plan(plan_id)
            assert plan is not None
            edited = validate_edit(store, deps.profiles(), plan_id, answer["tasks"])
            store.replace_open_tasks(plan_id, plan.goal, [t.to_json() for t in edited])
        if routine is not None:
            approve_instance(deps.workspace(), routine[0])
        # The author's yes to the plan is a yes to its tasks' dispatches (DESIGN.md §15).
        mint_for_plan(
            store, plan_id, store.tasks(plan_id), deps.profiles(), answer.get("accept_paths")
        )
    store.set_plan_status(plan_id, "running")
    emit_plan(store, plan_id)
    return {"dispatching": plan_id, "dispatch_phase": "run"}


def _routine_of(call: ToolCallEntry) -> tuple[str, dict[str, str]] | None:
    """The routine a plan call says it runs (only a claim: `approved_instance` checks it)."""
    routine = cast(dict[str, Any], call.get("arguments") or {}).get("routine")
    if not isinstance(routine, dict):
        return None
    claim = cast(dict[str, Any], routine)
    name, args = claim.get("name"), claim.get("args")
    if not isinstance(name, str) or not isinstance(args, dict):
        return None
    values = cast(dict[object, object], args)
    return name, {str(k): str(v) for k, v in values.items()}


def _store_plan(deps: GraphDeps, state: TurnState, call: ToolCallEntry) -> tuple[str, Any]:
    """Validate and record the plan (idempotent: re-running the node after the approval
    interrupt finds it recorded). Raises PlanError."""
    store = deps.store
    request = plan_request(call)
    parse_budget(cast(dict[str, Any], call.get("arguments") or {}))  # refused before storing
    profiles = deps.profiles()
    plan_id = request.replan_of or f"plan-{call['id']}"
    existing = store.get_plan(plan_id)
    if request.replan_of is not None and (
        existing is None or existing.thread_id != state["thread_id"]
    ):
        raise PlanError(f"no plan {plan_id!r} in this thread to revise")
    ordered = validate_plan(
        request.tasks,
        profiles,
        completed=completed_specs(store, plan_id),
        max_tasks=MAX_TASKS if request.needs_approval else MAX_DELEGATED,
    )
    depth = int((state.get("agent") or {}).get("depth", 0)) + 1
    for task in ordered:
        if profiles[task.profile].max_depth < depth:
            raise PlanError(
                f"task {task.id!r}: profile {task.profile!r} may not run at depth {depth}"
            )
    if existing is None:
        store.create_plan(plan_id, state["thread_id"], request.goal, call["id"])
        existing = store.get_plan(plan_id)
    assert existing is not None
    if existing.version == 0 or existing.call_id != call["id"]:
        record_budget(deps, plan_id, cast(dict[str, Any], call.get("arguments") or {}))
        store.replace_open_tasks(plan_id, request.goal, [t.to_json() for t in ordered])
        store.set_plan_status(plan_id, "awaiting_approval", call_id=call["id"])
    return plan_id, request


def _approval_payload(deps: GraphDeps, plan_id: str) -> PlanApprovalQuestion:
    store = deps.store
    plan = store.get_plan(plan_id)
    assert plan is not None
    tasks = [task_spec(t).to_json() for t in store.tasks(plan_id) if t.status != "succeeded"]
    return {
        "kind": "plan_approval",
        "title": "Approve the plan?",
        "body": f"{plan.goal} ({len(tasks)} tasks)",
        "plan_id": plan_id,
        "version": plan.version,
        "goal": plan.goal,
        "tasks": tasks,
        "profiles": sorted(deps.profiles()),
    }


def _call_result(
    store: Store, state: TurnState, call: ToolCallEntry, outcome: ToolOutcome
) -> dict[str, Any]:
    record_result(store, state["thread_id"], call["id"], outcome)
    entry = {
        "role": "tool",
        "tool_call_id": call["id"],
        "name": call["name"],
        "content": outcome.text,
    }
    return {"scratch": [entry], "plan_call": None, "dispatch_phase": None, "dispatching": None}


def _join(deps: GraphDeps, state: TurnState) -> dict[str, Any]:
    store, thread_id = deps.store, state["thread_id"]
    plan_id = state.get("dispatching")
    plan = store.get_plan(plan_id) if plan_id else None
    if plan is None:
        return {"dispatch_phase": None, "dispatching": None}
    tasks = store.tasks(plan.id)
    if deps.coordinator.aborted(plan.id):
        status = "aborted"
    elif all(t.status in ("succeeded", "skipped") for t in tasks):
        status = "completed"
    else:
        status = "failed"
    store.set_plan_status(plan.id, status)
    emit_plan(store, plan.id)
    text = _report(plan, status, tasks, store)
    call = state.get("plan_call") or {
        "id": plan.call_id or "",
        "name": "atrium__plan",
        "arguments": {},
    }
    update = _call_result(
        store, state, call, ToolOutcome(is_error=status != "completed", text=text)
    )
    for envelope in store.unacked_envelopes(thread_id, plan.id):
        store.ack_envelope(envelope.id)
    deps.coordinator.forget_plan(plan.id)
    return update


def _report(plan: PlanRecord, status: str, tasks: list[TaskRecord], store: Store) -> str:
    """The call's result: per task its status, findings, files and stats, from the outbox."""
    plan_id = plan.id
    finals = {e.task_id: e for e in store.envelopes(plan.thread_id) if e.plan_id == plan_id}
    lines = [f"Plan {plan_id}: {status}."]
    for task in tasks:
        envelope = finals.get(task.id)
        payload = envelope.payload if envelope is not None else {}
        stats = payload.get("stats", {})
        lines.append(
            f"- [{task.status}] {task.id} ({task.title}); profile {task.profile}; "
            f"{stats.get('attempts', task.attempt)} attempt(s), {stats.get('duration_s', 0)} s, "
            f"tokens {task.tokens_in}/{task.tokens_out}, cost {task.cost:.4f}"
        )
        if task.summary:
            lines.append(f"  Findings: {task.summary}")
        if envelope is not None and envelope.artifacts:
            lines.append("  Files: " + ", ".join(envelope.artifacts))
        if task.error:
            lines.append(f"  Error: {task.error}")
    if status == "failed":
        lines.append(
            f"Some tasks did not succeed. To revise the plan call atrium__plan with "
            f"plan_id={plan_id!r}; completed tasks are kept as they are."
        )
    return "\n".join(lines)
