"""Wire methods for schedules (`schedule/*`): the same ones the agent manages through the
schedule MCP server. Each fire is a `FireInfo` in the schedule's history, with a reason when it
was skipped. Each schedule has an `UnattendedPolicy` for a question its run asks while nobody
answers (the heartbeat has one too, in `AutomationInfo`). Failures are `QueueErrorCode`s
(`SCHEDULE_INVALID`, `NO_SUCH_SCHEDULE`).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.queue import QueueEmpty

ScheduleKind: TypeAlias = Literal["once", "interval", "cron"]
MissedPolicy: TypeAlias = Literal["run_once", "skip"]
UnattendedAction: TypeAlias = Literal["wait", "deny_after", "skip"]
MAX_DENY_AFTER_MINUTES = 7 * 24 * 60


class UnattendedPolicy(WireModel):
    """What a run nobody may be watching (a schedule's, the heartbeat's) does with a question
    nobody answers. `wait`: the author is notified and the question waits. `deny_after`: the
    author is notified; unanswered after `minutes` it is answered no (an approval denied, a
    question or form declined, a plan rejected) with that reason, and the run goes on.
    `skip`: the run's first question ends it (cancelled, its fire `skipped`); nothing that
    needed the answer was done. An answer the author gives first always wins."""

    action: UnattendedAction = "wait"
    minutes: int = Field(
        default=30,
        ge=1,
        le=MAX_DENY_AFTER_MINUTES,
        description="With deny_after: how long a question waits for the author.",
    )


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
    unattended: UnattendedPolicy = UnattendedPolicy()


class FireInfo(WireModel):
    schedule_id: str
    scheduled_for: float
    status: str = Field(
        description="claimed, started, queued (behind its thread's turn), finished, waiting "
        "(on the author), failed, cancelled or skipped (a missed time, or a run that needed an "
        "answer under the `skip` unattended policy)."
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
    unattended: UnattendedPolicy = UnattendedPolicy()


class ScheduleUpdateParams(WireModel):
    schedule_id: str
    name: str | None = None
    spec: str | None = None
    timezone: str | None = None
    prompt: str | None = None
    missed: MissedPolicy | None = None
    unattended: UnattendedPolicy | None = None


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


SCHEDULE_LIST = "schedule/list"
SCHEDULE_CREATE = "schedule/create"
SCHEDULE_UPDATE = "schedule/update"
SCHEDULE_PAUSE = "schedule/pause"
SCHEDULE_RESUME = "schedule/resume"
SCHEDULE_DELETE = "schedule/delete"
SCHEDULE_RUN_NOW = "schedule/run_now"
SCHEDULE_HISTORY = "schedule/history"

SCHEDULE_METHODS: dict[str, MethodSpec] = {
    SCHEDULE_LIST: MethodSpec(QueueEmpty, ScheduleListResult, "Every schedule."),
    SCHEDULE_CREATE: MethodSpec(ScheduleCreateParams, ScheduleInfo, "Create a schedule."),
    SCHEDULE_UPDATE: MethodSpec(ScheduleUpdateParams, ScheduleInfo, "Change a schedule."),
    SCHEDULE_PAUSE: MethodSpec(ScheduleRef, ScheduleInfo, "Stop firing until resumed."),
    SCHEDULE_RESUME: MethodSpec(ScheduleRef, ScheduleInfo, "Fire again from now on."),
    SCHEDULE_DELETE: MethodSpec(ScheduleRef, QueueEmpty, "Delete a schedule (history too)."),
    SCHEDULE_RUN_NOW: MethodSpec(ScheduleRef, ScheduleRunResult, "Run its prompt now."),
    SCHEDULE_HISTORY: MethodSpec(ScheduleRef, ScheduleHistoryResult, "Its fires, skips."),
}
