"""schedule/*, automation/*, heartbeat/*: the Schedules panel's methods and the settings of
work that starts itself."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from pydantic import ValidationError

from mcp_servers.schedule import ErrorCode as RefusalCode
from mcp_servers.schedule import Fire, ScheduleRefusal
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import ErrorCode, RpcError
from sidecar.protocol.queue import (
    AutomationInfo,
    AutomationSetParams,
    FireInfo,
    HeartbeatBeat,
    HeartbeatHistoryResult,
    QueueEmpty,
    QueueErrorCode,
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


def _automation(svc: Services) -> Automation:
    if svc.automation is None:
        raise RpcError(ErrorCode.INTERNAL_ERROR, "schedules are not available")
    return svc.automation


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


@registry.method("schedule/list")
async def schedule_list(svc: Services, params: QueueEmpty) -> ScheduleListResult:
    del params
    auto = _automation(svc)
    return ScheduleListResult(
        schedules=tuple(ScheduleInfo.model_validate(s.view()) for s in auto.book.list()),
        default_timezone=auto.zone_name,
    )


@registry.method("schedule/create")
async def schedule_create(svc: Services, params: ScheduleCreateParams) -> ScheduleInfo:
    auto = _automation(svc)
    with _refusals():
        created = auto.book.create(
            kind=params.kind,
            spec=params.spec,
            prompt=params.prompt,
            timezone=params.timezone,
            thread_id=params.thread_id,
            name=params.name,
            missed=params.missed,
        )
        return _info(auto, created.id)


@registry.method("schedule/update")
async def schedule_update(svc: Services, params: ScheduleUpdateParams) -> ScheduleInfo:
    auto = _automation(svc)
    with _refusals():
        auto.book.update(
            params.schedule_id,
            spec=params.spec,
            timezone=params.timezone,
            prompt=params.prompt,
            name=params.name,
            missed=params.missed,
        )
        return _info(auto, params.schedule_id)


@registry.method("schedule/pause")
async def schedule_pause(svc: Services, params: ScheduleRef) -> ScheduleInfo:
    auto = _automation(svc)
    with _refusals():
        auto.book.set_enabled(params.schedule_id, False)
        return _info(auto, params.schedule_id)


@registry.method("schedule/resume")
async def schedule_resume(svc: Services, params: ScheduleRef) -> ScheduleInfo:
    auto = _automation(svc)
    with _refusals():
        auto.book.set_enabled(params.schedule_id, True)
        return _info(auto, params.schedule_id)


@registry.method("schedule/delete")
async def schedule_delete(svc: Services, params: ScheduleRef) -> QueueEmpty:
    with _refusals():
        _automation(svc).book.delete(params.schedule_id)
    return QueueEmpty()


@registry.method("schedule/run_now")
async def schedule_run_now(svc: Services, params: ScheduleRef) -> ScheduleRunResult:
    """Records a manual fire and starts it at once (the scheduler's own pass)."""
    auto = _automation(svc)
    with _refusals():
        fire = auto.book.request_run(params.schedule_id)
    await auto.scheduler.tick()
    done = auto.book.fire(fire.schedule_id, fire.scheduled_for)
    return ScheduleRunResult(run_id=done.run_id, thread_id=done.thread_id or "")


@registry.method("schedule/history")
async def schedule_history(svc: Services, params: ScheduleRef) -> ScheduleHistoryResult:
    with _refusals():
        fires = _automation(svc).book.history(params.schedule_id)
    return ScheduleHistoryResult(fires=tuple(_fire(f) for f in fires))


@registry.method("automation/get")
async def automation_get(svc: Services, params: QueueEmpty) -> AutomationInfo:
    del params
    return svc.automation_settings.load() if svc.automation_settings else AutomationInfo()


@registry.method("automation/set")
async def automation_set(svc: Services, params: AutomationSetParams) -> AutomationInfo:
    if svc.automation_settings is None:
        raise RpcError(ErrorCode.INTERNAL_ERROR, "automation settings are not available")
    try:
        info = svc.automation_settings.update(params.model_dump())
    except ValidationError as exc:
        raise RpcError(QueueErrorCode.AUTOMATION_INVALID, str(exc)) from exc
    await svc.runs.lanes.caps_changed()
    if svc.automation is not None:
        svc.automation.heartbeat.poke()
    return info


@registry.method("heartbeat/history")
async def heartbeat_history(svc: Services, params: QueueEmpty) -> HeartbeatHistoryResult:
    del params
    auto = _automation(svc)
    return HeartbeatHistoryResult(
        thread_id=auto.heartbeat.thread_id, beats=tuple(auto.heartbeat.history())
    )


@registry.method("heartbeat/run_now")
async def heartbeat_run_now(svc: Services, params: QueueEmpty) -> HeartbeatBeat:
    del params
    auto = _automation(svc)
    status, detail = await auto.heartbeat.beat()
    if status == "running":
        return HeartbeatBeat(at=auto.clock.now(), status="running", run_id=detail)
    return HeartbeatBeat(at=auto.clock.now(), status="skipped", reason=detail)
