"""dispatch: hand tasks to subagents and bring their results back.

Phases (the `dispatch_phase` field):

- `plan`: the planner called `atrium__delegate` or `atrium__plan`. Validate the DAG (an invalid
  one goes back to the planner as the call's error result), store it (a replan bumps the plan's
  version and keeps completed tasks), and for a plan ask the author's approval unless the thread
  is autonomous (`plan_approval` interrupt: approve as is or edited, or reject).
- handed off: on the author's own thread the approved plan goes to the background
  (`deps.background`, the runtime's `TeamDesk`): the call's result says it started, with its
  task ids, and the turn goes on; the plan's report is announced into the thread when it ends.
- `run`: a subagent's own plan (its task waits for it): the edge after this node fans out with
  `Send`: one `subagent` per open task, all in one step; each waits for its dependencies and its
  profile's slot itself, so ready tasks start the moment they are ready.
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
    TaskSpec,
    validate_plan,
)
from sidecar.plans.delegation import mint_for_plan
from sidecar.plans.estimate import configured_model, estimate
from sidecar.plans.plan_budget import parse_budget, record_budget
from sidecar.plans.planner_tools import plan_request
from sidecar.plans.preflight import check_agents
from sidecar.plans.records import emit_plan
from sidecar.plans.report import plan_outcome, plan_report
from sidecar.plans.roster import fit_reach, roster
from sidecar.plans.routines import approve_instance, approved_instance
from sidecar.plans.runner import run_task
from sidecar.plans.shapes import completed_specs, task_spec, validate_edit
from sidecar.store import PlanRecord, Store
from sidecar.turn.events import ToolCalled, emit
from sidecar.turn.questions import PlanApprovalQuestion
from sidecar.turn.state import SubagentInput, ToolCallEntry, TurnState


def make_dispatch(deps: GraphDeps):
    async def dispatch(state: TurnState) -> dict[str, Any]:
        phase = state.get("dispatch_phase")
        if phase == "plan":
            return await _propose(deps, state)
        if phase == "start":
            return _hand_off(deps, state) or {"dispatch_phase": "run"}
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


async def _propose(deps: GraphDeps, state: TurnState) -> dict[str, Any]:
    store, thread_id = deps.store, state["thread_id"]
    call = state.get("plan_call")
    if call is None:
        raise RuntimeError("a plan is proposed only after the planner chose one")
    record_call(store, thread_id, call)
    emit(ToolCalled(call["id"], "atrium", call["name"][8:], call["arguments"]))
    try:
        await check_agents(deps, list(plan_request(call).tasks))  # before it is stored
        was = await _stop_live(deps, state, call)
        plan_id, request, proposed = _store_plan(deps, state, call, live=was is not None)
    except PlanError as exc:
        return _call_result(
            store, state, call, ToolOutcome(is_error=True, text=f"Invalid plan: {exc}")
        )
    routine = _routine_of(call)
    approved_routine = routine is not None and approved_instance(
        deps.workspace(), routine[0], routine[1], request.goal, request.tasks
    )
    if request.needs_approval and not store.is_autonomous(thread_id) and not approved_routine:
        answer = interrupt(_approval_payload(deps, plan_id, proposed if was else None))
        if answer.get("decision") != "approve" and was is not None:
            return _keep_live(deps, state, call, plan_id, was=was, reason=answer.get("reason"))
        if answer.get("decision") != "approve":
            store.set_plan_status(plan_id, "rejected")
            emit_plan(store, plan_id)
            reason = answer.get("reason")
            text = "The author rejected the plan." + (f" Reason: {reason}" if reason else "")
            return _call_result(store, state, call, ToolOutcome(is_error=True, text=text))
        if answer.get("tasks"):
            proposed = validate_edit(store, deps.profiles(), plan_id, answer["tasks"])
            if was is None:
                plan = store.get_plan(plan_id)
                assert plan is not None
                store.replace_open_tasks(plan_id, plan.goal, [t.to_json() for t in proposed])
        if routine is not None:
            approve_instance(deps.workspace(), routine[0])
        if was is not None:  # the revision replaces the stopped plan's open tasks only now
            store.replace_open_tasks(plan_id, request.goal, [t.to_json() for t in proposed])
        # The author's yes to the plan is a yes to its tasks' dispatches (DESIGN.md §15).
        mint_for_plan(
            store, plan_id, store.tasks(plan_id), deps.profiles(), answer.get("accept_paths")
        )
    elif was is not None:
        store.replace_open_tasks(plan_id, request.goal, [t.to_json() for t in proposed])
    store.set_plan_status(plan_id, "running")
    emit_plan(store, plan_id)
    return _hand_off(deps, {**state, "dispatching": plan_id}) or {
        "dispatching": plan_id,
        "dispatch_phase": "run",
    }


def _hand_off(deps: GraphDeps, state: TurnState) -> dict[str, Any] | None:
    """Start the plan in the background of the author's thread and answer its call at once;
    None where it runs here instead (a subagent's plan: its task waits for it)."""
    plan_id = state.get("dispatching")
    if state.get("agent") is not None or not plan_id:
        return None
    store = deps.store
    plan = store.get_plan(plan_id)
    assert plan is not None
    call = state.get("plan_call") or {
        "id": plan.call_id or "",
        "name": "atrium__plan",
        "arguments": {},
    }
    deps.background(state["thread_id"], plan_id)
    return _call_result(store, state, call, ToolOutcome(is_error=False, text=_started(store, plan)))


def _started(store: Store, plan: PlanRecord) -> str:
    """The call's result when its plan starts in the background."""
    lines = [
        f"Plan {plan.id} is running in the background: the author can keep talking with you "
        "meanwhile. Its report is announced in this conversation when it ends; until then, "
        "answer without waiting for it.",
    ]
    lines += [
        f"- {t.id} ({t.title}): {t.status}; profile {t.profile}" for t in store.tasks(plan.id)
    ]
    return "\n".join(lines)


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


def _store_plan(
    deps: GraphDeps, state: TurnState, call: ToolCallEntry, *, live: bool
) -> tuple[str, Any, list[TaskSpec]]:
    """Validate and record the plan (idempotent: re-running the node after the approval
    interrupt finds it recorded); returns its id, the request and its validated tasks. A
    revision of a live plan (`live`: it was running or paused) leaves the plan's tasks as they
    are until the author approves. Raises PlanError."""
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
    ordered, moved = fit_reach(ordered, roster(profiles, deps.coordinator))
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
    if live:
        return plan_id, request, ordered
    if existing.version == 0 or existing.call_id != call["id"]:
        record_budget(deps, plan_id, cast(dict[str, Any], call.get("arguments") or {}))
        store.replace_open_tasks(plan_id, request.goal, [t.to_json() for t in ordered])
        for task_id, why in moved.items():  # shown on the task, in the plan dialog and tree
            task = store.get_task(plan_id, task_id)
            if task is not None:
                store.update_task_from(task, activity=why)
        store.set_plan_status(plan_id, "awaiting_approval", call_id=call["id"])
    return plan_id, request, ordered


async def _stop_live(deps: GraphDeps, state: TurnState, call: ToolCallEntry) -> str | None:
    """A revision of a plan of this thread that is running or paused: its work stops where it
    is (sessions and isolated copies kept) while the author decides; returns the status it had
    (kept in the journal, so the node's re-run after the approval finds it), else None."""
    request = plan_request(call)
    if request.replan_of is None:
        return None
    store = deps.store
    key = f"{state['thread_id']}:revise:{call['id']}"
    entry = store.journal_entry(key)
    if entry is not None and entry.result is not None:
        return str(entry.result["was"])
    plan = store.get_plan(request.replan_of)
    if plan is None or plan.thread_id != state["thread_id"] or plan.status not in _LIVE:
        return None
    with store.transaction():
        store.journal_intent(key, state["thread_id"], "atrium", "revise_plan", {})
        store.journal_result(key, {"was": plan.status})
        store.set_plan_status(plan.id, "paused")  # not taken up at start-up meanwhile
    await deps.pause_background(plan.id)
    return plan.status


def _keep_live(
    deps: GraphDeps,
    state: TurnState,
    call: ToolCallEntry,
    plan_id: str,
    *,
    was: str,
    reason: object,
) -> dict[str, Any]:
    """The author rejected the revision of a live plan: it goes on as it was (a running plan
    is taken up again where it stopped; a paused one stays paused)."""
    store = deps.store
    store.set_plan_status(plan_id, was)
    if was == "running":
        deps.background(state["thread_id"], plan_id)
    emit_plan(store, plan_id)
    text = f"The author kept plan {plan_id} as it was ({was}); the revision was not applied." + (
        f" Reason: {reason}" if reason else ""
    )
    return _call_result(store, state, call, ToolOutcome(is_error=True, text=text))


_LIVE = frozenset({"running", "paused"})


def _approval_payload(
    deps: GraphDeps, plan_id: str, proposed: list[TaskSpec] | None = None
) -> PlanApprovalQuestion:
    """The plan's open tasks as the author approves them (`proposed`: a revision of a live plan,
    not stored yet)."""
    store = deps.store
    plan = store.get_plan(plan_id)
    assert plan is not None
    open_tasks = proposed or [task_spec(t) for t in store.tasks(plan_id) if t.status != "succeeded"]
    tasks = [t.to_json() for t in open_tasks]
    guess = estimate(store, open_tasks, deps.profiles(), configured_model(deps.planner()))
    return {
        "kind": "plan_approval",
        "title": "Approve the plan?",
        "body": f"{plan.goal} ({len(tasks)} tasks)",
        "plan_id": plan_id,
        "version": plan.version,
        "goal": plan.goal,
        "tasks": tasks,
        "profiles": sorted(deps.profiles()),
        "estimate_tokens": guess.tokens,
        "estimate_cost": guess.cost,
        "estimate": guess.describe(),
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
    status = plan_outcome(tasks, aborted=deps.coordinator.aborted(plan.id))
    store.set_plan_status(plan.id, status)
    emit_plan(store, plan.id)
    text = plan_report(store, plan, status, tasks)
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
