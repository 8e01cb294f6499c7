"""Wire methods for the heartbeat (`heartbeat/*`): its recent beats, and a beat now."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.queue import QueueEmpty


class HeartbeatBeat(WireModel):
    at: float
    status: Literal["running", "ok", "notified", "skipped", "failed"]
    reason: str | None = None
    text: str | None = None
    run_id: str | None = None


class HeartbeatHistoryResult(WireModel):
    thread_id: str | None
    beats: tuple[HeartbeatBeat, ...] = Field(description="Newest first.")


HEARTBEAT_HISTORY = "heartbeat/history"
HEARTBEAT_RUN_NOW = "heartbeat/run_now"

HEARTBEAT_METHODS: dict[str, MethodSpec] = {
    HEARTBEAT_HISTORY: MethodSpec(QueueEmpty, HeartbeatHistoryResult, "Recent beats."),
    HEARTBEAT_RUN_NOW: MethodSpec(QueueEmpty, HeartbeatBeat, "Beat now (or say why not)."),
}
