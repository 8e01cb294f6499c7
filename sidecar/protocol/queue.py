"""Wire methods for talking while a run goes (queue modes), lanes, schedules and the heartbeat.

`run/start` on a busy thread queues the message with a `mode` (see `QueueMode`); each queued
message is a `QueuedMessageInfo` whose `status` moves queued → delivered → answered (or
withdrawn), announced by `queue/update` notifications and listed by `queue/list`.
Schedules (`schedule/*`) are the same ones the agent manages through the schedule MCP server;
each fire is a `FireInfo` in the schedule's history, with a reason when it was skipped.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

QueueMode: TypeAlias = Literal["steer", "collect", "followup", "interrupt"]
QueueStatus: TypeAlias = Literal["queued", "delivered", "answered", "withdrawn"]
MAX_QUEUED_PER_THREAD = 1000


class QueueErrorCode(IntEnum):
    """Application error codes of the queue and schedule methods (-32060..-32069)."""

    QUEUE_FULL = -32060
    NO_SUCH_QUEUED = -32061
    ALREADY_DELIVERED = -32062
    SCHEDULE_INVALID = -32063
    NO_SUCH_SCHEDULE = -32064
    AUTOMATION_INVALID = -32065


class QueuedMessageInfo(WireModel):
    id: str
    thread_id: str
    mode: QueueMode
    text: str
    status: QueueStatus
    run_id: str | None = Field(
        default=None, description="The run it was delivered to (None while queued)."
    )
    created_at: float
    delivered_at: float | None = None
    answered_at: float | None = None


class QueueUpdateParams(WireModel):
    """The `queue/update` notification: one queued message changed status (or text)."""

    message: QueuedMessageInfo


class QueueListParams(WireModel):
    thread_id: str


class QueueListResult(WireModel):
    thread_id: str
    default_mode: QueueMode
    messages: tuple[QueuedMessageInfo, ...] = Field(
        description="Not yet answered (queued and delivered), oldest first."
    )


class QueueEditParams(WireModel):
    thread_id: str
    message_id: str
    text: str = Field(min_length=1, max_length=200_000)


class QueueRef(WireModel):
    thread_id: str
    message_id: str


class QueueModeParams(WireModel):
    thread_id: str
    mode: QueueMode


class QueueEmpty(WireModel):
    """No fields."""


# ---- schedules -------------------------------------------------------------------------------

ScheduleKind: TypeAlias = Literal["once", "interval", "cron"]
MissedPolicy: TypeAlias = Literal["run_once", "skip"]


class ScheduleInfo(WireModel):
    id: str
    name: str
    kind: ScheduleKind
    spec: str = Field(description="once: ISO time; interval: seconds; cron: 5 fields.")
    timezone: str
    prompt: str
    thread_id: str | None = Field(description="None: a new thread for every run.")
    missed: MissedPolicy
    enabled: bool
    next_fire_at: float | None = Field(description="Unix time of the next fire; None: done.")
    next_fires_local: tuple[str, ...] = Field(
        default=(), description="The next fire times in the schedule's zone (ISO, up to 3)."
    )
    last_status: str | None = None
    last_run_id: str | None = None
    created_at: float


class FireInfo(WireModel):
    schedule_id: str
    scheduled_for: float
    status: str = Field(
        description="claimed, started, queued (behind its thread's turn), finished, waiting "
        "(on the author), failed, cancelled or skipped."
    )
    reason: str | None = Field(default=None, description="Why it was skipped or failed.")
    run_id: str | None = None
    thread_id: str | None = None
    missed: int = Field(default=0, description="Missed times this one fire stood in for.")
    recorded_at: float


class ScheduleCreateParams(WireModel):
    name: str = Field(default="", max_length=200)
    kind: ScheduleKind
    spec: str = Field(min_length=1, max_length=200)
    timezone: str | None = Field(default=None, description="IANA zone; None: the workspace's.")
    prompt: str = Field(min_length=1)
    thread_id: str | None = None
    missed: MissedPolicy = "run_once"


class ScheduleUpdateParams(WireModel):
    schedule_id: str
    name: str | None = None
    spec: str | None = None
    timezone: str | None = None
    prompt: str | None = None
    missed: MissedPolicy | None = None


class ScheduleRef(WireModel):
    schedule_id: str


class ScheduleListResult(WireModel):
    schedules: tuple[ScheduleInfo, ...]
    default_timezone: str


class ScheduleHistoryResult(WireModel):
    fires: tuple[FireInfo, ...] = Field(description="Newest first.")


class ScheduleRunResult(WireModel):
    run_id: str | None
    thread_id: str


class AutomationInfo(WireModel):
    """Lane caps, the heartbeat and the default queue mode (stored in the database)."""

    lane_main: int = Field(default=4, ge=1, le=64)
    lane_subagent: int = Field(
        default=64, ge=1, le=256, description="All profiles together (each has its own cap too)."
    )
    lane_cron: int = Field(default=1, ge=1, le=64)
    heartbeat_minutes: int = Field(default=0, ge=0, le=24 * 60, description="0: off.")
    active_start: str = Field(default="08:00", pattern=r"^\d\d:\d\d$")
    active_end: str = Field(default="22:00", pattern=r"^\d\d:\d\d$")
    default_mode: QueueMode = "steer"


class AutomationSetParams(WireModel):
    lane_main: int | None = Field(default=None, ge=1, le=64)
    lane_subagent: int | None = Field(default=None, ge=1, le=256)
    lane_cron: int | None = Field(default=None, ge=1, le=64)
    heartbeat_minutes: int | None = Field(default=None, ge=0, le=24 * 60)
    active_start: str | None = Field(default=None, pattern=r"^\d\d:\d\d$")
    active_end: str | None = Field(default=None, pattern=r"^\d\d:\d\d$")
    default_mode: QueueMode | None = None


class HeartbeatBeat(WireModel):
    at: float
    status: Literal["running", "ok", "notified", "skipped", "failed"]
    reason: str | None = None
    text: str | None = None
    run_id: str | None = None


class HeartbeatHistoryResult(WireModel):
    thread_id: str | None
    beats: tuple[HeartbeatBeat, ...] = Field(description="Newest first.")


class NotifyParams(WireModel):
    """The `automation/notify` notification: a scheduled run or heartbeat wants the author."""

    kind: Literal["heartbeat", "schedule"]
    title: str
    text: str
    thread_id: str | None = None
    run_id: str | None = None


QUEUE_METHODS: dict[str, MethodSpec] = {
    "queue/list": MethodSpec(QueueListParams, QueueListResult, "The thread's queued messages."),
    "queue/edit": MethodSpec(QueueEditParams, QueuedMessageInfo, "Edit a not yet delivered one."),
    "queue/withdraw": MethodSpec(QueueRef, QueuedMessageInfo, "Withdraw a not yet delivered one."),
    "queue/set_mode": MethodSpec(QueueModeParams, QueueEmpty, "The thread's default mode."),
}

SCHEDULE_METHODS: dict[str, MethodSpec] = {
    "schedule/list": MethodSpec(QueueEmpty, ScheduleListResult, "Every schedule."),
    "schedule/create": MethodSpec(ScheduleCreateParams, ScheduleInfo, "Create a schedule."),
    "schedule/update": MethodSpec(ScheduleUpdateParams, ScheduleInfo, "Change a schedule."),
    "schedule/pause": MethodSpec(ScheduleRef, ScheduleInfo, "Stop firing until resumed."),
    "schedule/resume": MethodSpec(ScheduleRef, ScheduleInfo, "Fire again from now on."),
    "schedule/delete": MethodSpec(ScheduleRef, QueueEmpty, "Delete a schedule (history too)."),
    "schedule/run_now": MethodSpec(ScheduleRef, ScheduleRunResult, "Run its prompt now."),
    "schedule/history": MethodSpec(ScheduleRef, ScheduleHistoryResult, "Its fires, skips."),
    "automation/get": MethodSpec(QueueEmpty, AutomationInfo, "Lanes, heartbeat, queue mode."),
    "automation/set": MethodSpec(AutomationSetParams, AutomationInfo, "Change them."),
    "heartbeat/history": MethodSpec(QueueEmpty, HeartbeatHistoryResult, "Recent beats."),
    "heartbeat/run_now": MethodSpec(QueueEmpty, HeartbeatBeat, "Beat now (or say why not)."),
}

QUEUE_NOTIFICATIONS: dict[str, type[WireModel]] = {
    "queue/update": QueueUpdateParams,
    "automation/notify": NotifyParams,
}
