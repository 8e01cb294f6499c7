"""automation/get, automation/set: lane caps, the heartbeat and the default queue mode."""

from __future__ import annotations

from pydantic import ValidationError

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    AUTOMATION_GET,
    AUTOMATION_SET,
    AutomationInfo,
    AutomationSetParams,
    ErrorCode,
    QueueEmpty,
    QueueErrorCode,
    RpcError,
)


@registry.method(AUTOMATION_GET)
async def automation_get(svc: Services, params: QueueEmpty) -> AutomationInfo:
    del params
    return svc.automation_settings.load() if svc.automation_settings else AutomationInfo()


@registry.method(AUTOMATION_SET)
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
