"""automation/get, automation/set: lane caps, the heartbeat and the default queue mode."""

from __future__ import annotations

from pydantic import ValidationError

from mcp_servers.field_errors import describe
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    AUTOMATION_GET,
    AUTOMATION_SET,
    AutomationInfo,
    AutomationSetParams,
    QueueEmpty,
    QueueErrorCode,
    RpcError,
)


@registry.method(AUTOMATION_GET)
async def automation_get(svc: Services, params: QueueEmpty) -> AutomationInfo:
    del params
    return svc.automation_settings.load()


@registry.method(AUTOMATION_SET)
async def automation_set(svc: Services, params: AutomationSetParams) -> AutomationInfo:
    try:
        info = svc.automation_settings.update(params.model_dump())
    except ValidationError as exc:
        raise RpcError(QueueErrorCode.AUTOMATION_INVALID, describe(exc)) from exc
    await svc.runs.lanes.caps_changed()
    svc.automation.heartbeat.poke()
    return info
