"""heartbeat/history, heartbeat/run_now: the heartbeat's recent beats, and a beat now."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    HEARTBEAT_HISTORY,
    HEARTBEAT_RUN_NOW,
    HeartbeatBeat,
    HeartbeatHistoryResult,
    QueueEmpty,
)


@registry.method(HEARTBEAT_HISTORY)
async def heartbeat_history(svc: Services, params: QueueEmpty) -> HeartbeatHistoryResult:
    del params
    auto = svc.automation
    return HeartbeatHistoryResult(
        thread_id=auto.heartbeat.thread_id, beats=tuple(auto.heartbeat.history())
    )


@registry.method(HEARTBEAT_RUN_NOW)
async def heartbeat_run_now(svc: Services, params: QueueEmpty) -> HeartbeatBeat:
    del params
    auto = svc.automation
    status, detail = await auto.heartbeat.beat()
    if status == "running":
        return HeartbeatBeat(at=auto.clock.now(), status="running", run_id=detail)
    return HeartbeatBeat(at=auto.clock.now(), status="skipped", reason=detail)
