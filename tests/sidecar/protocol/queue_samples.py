"""Samples of the queue, schedule and automation wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import (
    AutomationInfo,
    AutomationSetParams,
    FireInfo,
    HeartbeatBeat,
    HeartbeatHistoryResult,
    NotifyParams,
    QueuedMessageInfo,
    QueueEditParams,
    QueueEmpty,
    QueueListParams,
    QueueListResult,
    QueueModeParams,
    QueueRef,
    QueueUpdateParams,
    ScheduleCreateParams,
    ScheduleHistoryResult,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleRef,
    ScheduleRunResult,
    ScheduleUpdateParams,
    UnattendedPolicy,
    WireModel,
)

QUEUED = QueuedMessageInfo(
    id="q-1",
    thread_id="t-1",
    mode="collect",
    text="also check chapter two",
    status="delivered",
    run_id="r-2",
    created_at=10.0,
    delivered_at=11.5,
)
SCHEDULE = ScheduleInfo(
    id="s-1",
    name="Morning summary",
    kind="cron",
    spec="0 9 * * 1-5",
    timezone="Europe/Berlin",
    prompt="Summarize yesterday's notes",
    thread_id=None,
    missed="run_once",
    enabled=True,
    next_fire_at=1_800_000_000.0,
    next_fires_local=("2027-01-15T09:00:00+01:00",),
    last_status="finished",
    last_run_id="r-9",
    created_at=1_700_000_000.0,
    unattended=UnattendedPolicy(action="deny_after", minutes=45),
)
FIRE = FireInfo(
    schedule_id="s-1",
    scheduled_for=1_799_000_000.0,
    status="skipped",
    reason="missed: the app was not running",
    missed=3,
    recorded_at=1_799_000_100.0,
)

QUEUE_SAMPLES: dict[type[WireModel], WireModel] = {
    QueueListParams: QueueListParams(thread_id="t-1"),
    QueueListResult: QueueListResult(thread_id="t-1", default_mode="steer", messages=(QUEUED,)),
    QueueEditParams: QueueEditParams(thread_id="t-1", message_id="q-1", text="check chapter 3"),
    QueuedMessageInfo: QUEUED,
    QueueRef: QueueRef(thread_id="t-1", message_id="q-1"),
    QueueModeParams: QueueModeParams(thread_id="t-1", mode="followup"),
    QueueEmpty: QueueEmpty(),
    ScheduleListResult: ScheduleListResult(schedules=(SCHEDULE,), default_timezone="UTC"),
    ScheduleCreateParams: ScheduleCreateParams(
        name="Tea",
        kind="once",
        spec="2027-01-01T16:00:00",
        timezone="Asia/Tokyo",
        prompt="tea",
        unattended=UnattendedPolicy(action="skip"),
    ),
    ScheduleInfo: SCHEDULE,
    ScheduleUpdateParams: ScheduleUpdateParams(
        schedule_id="s-1", spec="30 8 * * *", unattended=UnattendedPolicy(action="wait")
    ),
    UnattendedPolicy: UnattendedPolicy(action="deny_after", minutes=5),
    ScheduleRef: ScheduleRef(schedule_id="s-1"),
    ScheduleRunResult: ScheduleRunResult(run_id="r-3", thread_id="t-4"),
    ScheduleHistoryResult: ScheduleHistoryResult(fires=(FIRE,)),
    AutomationInfo: AutomationInfo(heartbeat_minutes=30, lane_cron=2),
    AutomationSetParams: AutomationSetParams(
        default_mode="collect",
        active_start="07:30",
        heartbeat_unattended=UnattendedPolicy(action="deny_after", minutes=10),
    ),
    HeartbeatBeat: HeartbeatBeat(at=6.0, status="running", run_id="r-hb"),
    HeartbeatHistoryResult: HeartbeatHistoryResult(
        thread_id="t-hb",
        beats=(HeartbeatBeat(at=5.0, status="skipped", reason="quiet-hours"),),
    ),
}

QUEUE_OTHER_SAMPLES: list[WireModel] = [
    QueueUpdateParams(message=QUEUED),
    NotifyParams(kind="heartbeat", title="Heartbeat", text="The build is red", thread_id="t-hb"),
]
