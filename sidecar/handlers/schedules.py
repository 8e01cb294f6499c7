"""schedule/*: the Schedules panel's schedules and their history of fires."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from mcp_servers.schedule import ErrorCode as RefusalCode
from mcp_servers.schedule import Fire, ScheduleRefusal
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    SCHEDULE_CREATE,
    SCHEDULE_DELETE,
    SCHEDULE_HISTORY,
    SCHEDULE_LIST,
    SCHEDULE_PAUSE,
    SCHEDULE_RESUME,
    SCHEDULE_RUN_NOW,
    SCHEDULE_UPDATE,
    FireInfo,
    QueueEmpty,
    QueueErrorCode,
    RpcError,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
    ScheduleUpdateParams,
)
from sidecar.runtime.automation import Automation


@contextmanager
def _refusals() -> Generator[None]:
    try:
        yield
    except ScheduleRefusal as exc:
        code = (
            QueueErrorCode.NO_SUCH_SCHEDULE
            if exc.code == RefusalCode.NO_SUCH_SCHEDULE
            else QueueErrorCode.SCHEDULE_INVALID
        )
        raise RpcError(code, str(exc), {"reason": str(exc.code)}) from exc


def _info(auto: Automation, schedule_id: str) -> ScheduleInfo:
    return ScheduleInfo.model_validate(auto.book.get(schedule_id).view())


def _fire(fire: Fire) -> FireInfo:
    return FireInfo(
        schedule_id=fire.schedule_id,
        scheduled_for=fire.scheduled_for,
        status=fire.status,
        reason=fire.reason,
        run_id=fire.run_id,
        thread_id=fire.thread_id,
        missed=fire.missed,
        recorded_at=fire.recorded_at,
    )


@registry.method(SCHEDULE_LIST)
async def schedule_list(svc: Services, params: QueueEmpty) -> ScheduleListResult:
    del params
    auto = svc.automation
    return ScheduleListResult(
        schedules=tuple(ScheduleInfo.model_validate(s.view()) for s in auto.book.list()),
        default_timezone=auto.zone_name,
    )


@registry.method(SCHEDULE_CREATE)
async def schedule_create(svc: Services, params: ScheduleCreateParams) -> ScheduleInfo:
    auto = svc.automation
    with _refusals():
        created = auto.book.create(
            kind=params.kind,
            spec=params.spec,
            prompt=params.prompt,
            timezone=params.timezone,
            thread_id=params.thread_id,
            name=params.name,
            missed=params.missed,
            unattended=params.unattended.action,
            deny_after_minutes=params.unattended.minutes,
        )
        return _info(auto, created.id)


@registry.method(SCHEDULE_UPDATE)
async def schedule_update(svc: Services, params: ScheduleUpdateParams) -> ScheduleInfo:
    auto = svc.automation
    policy = params.unattended
    with _refusals():
        auto.book.update(
            params.schedule_id,
            spec=params.spec,
            timezone=params.timezone,
            prompt=params.prompt,
            name=params.name,
            missed=params.missed,
            unattended=policy.action if policy is not None else None,
            deny_after_minutes=policy.minutes if policy is not None else None,
        )
        return _info(auto, params.schedule_id)


@registry.method(SCHEDULE_PAUSE)
async def schedule_pause(svc: Services, params: ScheduleRef) -> ScheduleInfo:
    auto = svc.automation
    with _refusals():
        auto.book.set_enabled(params.schedule_id, False)
        return _info(auto, params.schedule_id)


@registry.method(SCHEDULE_RESUME)
async def schedule_resume(svc: Services, params: ScheduleRef) -> ScheduleInfo:
    auto = svc.automation
    with _refusals():
        auto.book.set_enabled(params.schedule_id, True)
        return _info(auto, params.schedule_id)


@registry.method(SCHEDULE_DELETE)
async def schedule_delete(svc: Services, params: ScheduleRef) -> QueueEmpty:
    with _refusals():
        svc.automation.book.delete(params.schedule_id)
    return QueueEmpty()


@registry.method(SCHEDULE_RUN_NOW)
async def schedule_run_now(svc: Services, params: ScheduleRef) -> ScheduleRunResult:
    """Records a manual fire and starts it at once (the scheduler's own pass)."""
    auto = svc.automation
    with _refusals():
        fire = auto.book.request_run(params.schedule_id)
    await auto.scheduler.tick()
    done = auto.book.fire(fire.schedule_id, fire.scheduled_for)
    return ScheduleRunResult(run_id=done.run_id, thread_id=done.thread_id or "")


@registry.method(SCHEDULE_HISTORY)
async def schedule_history(svc: Services, params: ScheduleRef) -> ScheduleHistoryResult:
    with _refusals():
        fires = svc.automation.book.history(params.schedule_id)
    return ScheduleHistoryResult(fires=tuple(_fire(f) for f in fires))
