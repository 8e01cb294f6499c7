"""profile/*, plan/*, task/*: subagent profiles, the plans of a thread or of every thread (and
pausing, resuming or cancelling one), and their tasks."""

from __future__ import annotations

import uuid
from typing import Any

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.plans.profiles import Profile, ProfileError
from sidecar.plans.shapes import plan_snapshot
from sidecar.plans.task_messages import MessageRefused, send_to_task
from sidecar.protocol import (
    PLAN_CANCEL,
    PLAN_GET,
    PLAN_LIST,
    PLAN_PAUSE,
    PLAN_RESUME,
    PROFILE_LIST,
    PROFILE_SET,
    TASK_CANCEL,
    TASK_ENVELOPES,
    TASK_EVENTS,
    TASK_MESSAGE,
    TASK_RETRY,
    CoordEmpty,
    CoordErrorCode,
    EnvelopeInfo,
    PlanControlResult,
    PlanGetParams,
    PlanGetResult,
    PlanListParams,
    PlanListResult,
    PlanRef,
    ProfileInfo,
    ProfileListResult,
    ProfileSetParams,
    RpcError,
    SubagentEvent,
    TaskEnvelopesResult,
    TaskEventsParams,
    TaskEventsResult,
    TaskMessageParams,
    TaskMessageResult,
    TaskRef,
    TaskRetryResult,
)
from sidecar.runtime.errors import ThreadBusyError
from sidecar.runtime.wire import plan_info
from sidecar.store import PlanRecord, Store, TaskRecord

_RETRYABLE = frozenset({"failed", "cancelled", "skipped"})


def _profile_list(svc: Services) -> ProfileListResult:
    file = svc.profiles
    profiles, error = file.load()
    return ProfileListResult(
        profiles=tuple(ProfileInfo.model_validate(p.model_dump()) for p in profiles),
        path=str(file.path),
        error=error,
    )


@registry.method(PROFILE_LIST)
async def profile_list(svc: Services, params: CoordEmpty) -> ProfileListResult:
    del params
    return _profile_list(svc)


@registry.method(PROFILE_SET)
async def profile_set(svc: Services, params: ProfileSetParams) -> ProfileListResult:
    profiles = tuple(Profile.model_validate(p.model_dump()) for p in params.profiles)
    try:
        svc.profiles.save(profiles)
    except ProfileError as exc:
        raise RpcError(CoordErrorCode.PROFILES_INVALID, str(exc)) from exc
    return _profile_list(svc)


@registry.method(PLAN_GET)
async def plan_get(svc: Services, params: PlanGetParams) -> PlanGetResult:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    plans = tuple(plan_info(plan_snapshot(svc.store, p)) for p in svc.store.plans(params.thread_id))
    return PlanGetResult(
        thread_id=params.thread_id,
        autonomous=svc.store.is_autonomous(params.thread_id),
        plans=plans,
    )


@registry.method(PLAN_LIST)
async def plan_list(svc: Services, params: PlanListParams) -> PlanListResult:
    plans = svc.store.recent_plans(params.status, params.limit)
    return PlanListResult(plans=tuple(plan_info(plan_snapshot(svc.store, p)) for p in plans))


@registry.method(TASK_EVENTS)
async def task_events(svc: Services, params: TaskEventsParams) -> TaskEventsResult:
    task = _find_task(svc, TaskRef(**params.model_dump(exclude={"limit"})))
    bodies, older = svc.store.task_events(params.thread_id, task.plan_id, task.id, params.limit)
    return TaskEventsResult(
        events=tuple(SubagentEvent.model_validate_json(body) for body in bodies), has_older=older
    )


def _find_task(svc: Services, params: TaskRef) -> TaskRecord:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    plans = [p for p in svc.store.plans(params.thread_id) if params.plan_id in (None, p.id)]
    for plan in reversed(plans):
        task = svc.store.get_task(plan.id, params.task_id)
        if task is not None:
            return task
    raise RpcError(CoordErrorCode.NO_SUCH_TASK, f"no task {params.task_id!r} in this thread")


@registry.method(TASK_ENVELOPES)
async def task_envelopes(svc: Services, params: TaskRef) -> TaskEnvelopesResult:
    task = _find_task(svc, params)
    return TaskEnvelopesResult(
        envelopes=tuple(
            EnvelopeInfo(
                id=e.id,
                sender=e.sender,
                receiver=e.receiver,
                kind=e.kind,
                payload=e.payload,
                artifacts=e.artifacts,
                reply_to=e.reply_to,
                created_at=e.created_at,
                acked_at=e.acked_at,
            )
            for e in svc.store.envelopes_of_task(task.plan_id, task.id)
        )
    )


@registry.method(TASK_CANCEL)
async def task_cancel(svc: Services, params: TaskRef) -> CoordEmpty:
    task = _find_task(svc, params)
    if svc.coordinator.cancel_task(task.plan_id, task.id):
        return CoordEmpty()
    if task.final:
        raise RpcError(CoordErrorCode.TASK_NOT_RUNNING, f"task {task.id!r} is {task.status}")
    if svc.team.is_running(task.plan_id) or svc.runs.is_busy(params.thread_id):
        # Not started yet (waiting for dependencies or a slot): it ends as it starts.
        svc.coordinator.cancel_pending(task.plan_id, task.id)
        return CoordEmpty()
    updated = svc.store.update_task(
        task.plan_id, task.id, task.version, status="cancelled", error="cancelled by the author"
    )
    if updated is None:
        raise RpcError(CoordErrorCode.TASK_NOT_RUNNING, f"task {task.id!r} changed meanwhile")
    return CoordEmpty()


@registry.method(TASK_RETRY)
async def task_retry(svc: Services, params: TaskRef) -> TaskRetryResult:
    task = _find_task(svc, params)
    if task.status not in _RETRYABLE:
        raise RpcError(
            CoordErrorCode.TASK_NOT_RETRYABLE, f"task {task.id!r} is {task.status}, not ended"
        )
    plan = svc.store.get_plan(task.plan_id)
    assert plan is not None
    with typed_errors():
        if svc.store.get_thread(params.thread_id).parent_id is None:
            # The author's own plan runs in the background, beside whatever the thread does.
            _reopen(svc.store, plan.id, task.id)
            svc.store.set_plan_status(plan.id, "running")
            return TaskRetryResult(run_id=svc.team.start(params.thread_id, plan.id))
        if svc.runs.is_busy(params.thread_id):
            raise ThreadBusyError(params.thread_id)
        _reopen(svc.store, plan.id, task.id)
        svc.store.set_plan_status(plan.id, "running")
        call: dict[str, Any] = {"id": plan.call_id, "name": "atrium__plan", "arguments": {}}
        run_id = await svc.runs.continue_plan(params.thread_id, plan.id, call)
    return TaskRetryResult(run_id=run_id)


def _reopen(store: Store, plan_id: str, task_id: str) -> None:
    """The task runs again from a clean slate, and so do the tasks it kept from running."""
    reopened = {task_id}
    for task in store.tasks(plan_id):
        blocked_by_it = task.status == "cancelled" and any(d in reopened for d in task.depends_on)
        if task.id == task_id or blocked_by_it:
            store.update_task(
                plan_id,
                task.id,
                task.version,
                status="pending",
                attempt=0,
                error=None,
                stalled=False,
                finished_at=None,
            )
            reopened.add(task.id)


def _find_plan(svc: Services, params: PlanRef) -> PlanRecord:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    plan = svc.store.get_plan(params.plan_id)
    if plan is None or plan.thread_id != params.thread_id:
        raise RpcError(CoordErrorCode.NO_SUCH_PLAN, f"no plan {params.plan_id!r} in this thread")
    return plan


def _control_result(svc: Services, plan_id: str, run_id: str | None = None) -> PlanControlResult:
    plan = svc.store.get_plan(plan_id)
    assert plan is not None
    return PlanControlResult(plan=plan_info(plan_snapshot(svc.store, plan)), run_id=run_id)


@registry.method(PLAN_PAUSE)
async def plan_pause(svc: Services, params: PlanRef) -> PlanControlResult:
    """The author's own plans run in the background desk: pausing stops its agents where they
    are (their sessions and isolated copies kept) and records the plan as paused, which is
    not taken up at start-up; plan/resume goes on from there."""
    plan = _find_plan(svc, params)
    if plan.status != "running" or not svc.team.is_running(plan.id):
        raise RpcError(
            CoordErrorCode.PLAN_NOT_RUNNING, f"plan {plan.id!r} is {plan.status}, not running"
        )
    svc.store.set_plan_status(plan.id, "paused")
    await svc.team.pause(plan.id)
    for task in svc.store.tasks(plan.id):
        if not task.final:
            svc.store.update_task_from(task, activity="paused by the author")
    return _control_result(svc, plan.id)


@registry.method(PLAN_RESUME)
async def plan_resume(svc: Services, params: PlanRef) -> PlanControlResult:
    plan = _find_plan(svc, params)
    if plan.status != "paused":
        raise RpcError(
            CoordErrorCode.PLAN_NOT_PAUSED, f"plan {plan.id!r} is {plan.status}, not paused"
        )
    svc.store.set_plan_status(plan.id, "running")
    run_id = svc.team.start(params.thread_id, plan.id)
    return _control_result(svc, plan.id, run_id)


@registry.method(PLAN_CANCEL)
async def plan_cancel(svc: Services, params: PlanRef) -> PlanControlResult:
    """A running plan's tasks are stopped and it ends as aborted (announced like any end); a
    paused one is taken up only to end its open tasks as cancelled."""
    plan = _find_plan(svc, params)
    if plan.status not in ("running", "paused"):
        raise RpcError(
            CoordErrorCode.PLAN_NOT_RUNNING, f"plan {plan.id!r} is {plan.status}, not running"
        )
    svc.coordinator.abort_plan(plan.id)
    run_id = None
    if not svc.team.is_running(plan.id):
        svc.store.set_plan_status(plan.id, "running")
        run_id = svc.team.start(params.thread_id, plan.id)
    return _control_result(svc, plan.id, run_id)


@registry.method(TASK_MESSAGE)
async def task_message(svc: Services, params: TaskMessageParams) -> TaskMessageResult:
    """The author's word to a running task, delivered as the main agent's would be
    (`sidecar.plans.task_messages`)."""
    task = _find_task(
        svc, TaskRef(thread_id=params.thread_id, task_id=params.task_id, plan_id=params.plan_id)
    )
    deps = await svc.team.plan_deps()
    message_id = f"author-{uuid.uuid4().hex}"
    try:
        note = await send_to_task(
            deps, params.thread_id, task, params.text, message_id=message_id, sender="author"
        )
    except MessageRefused as exc:
        raise RpcError(CoordErrorCode.MESSAGE_REFUSED, str(exc)) from exc
    return TaskMessageResult(note=note)
