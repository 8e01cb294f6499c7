"""Wire methods for automation settings (`automation/*`): lane caps, the heartbeat and the
default queue mode; and the `automation/notify` notification, by which a scheduled run or the
heartbeat asks for the author. Failures are `QueueErrorCode.AUTOMATION_INVALID`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.queue import QueueEmpty, QueueMode
from sidecar.protocol.schedules import UnattendedPolicy


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
    heartbeat_unattended: UnattendedPolicy = Field(
        default=UnattendedPolicy(),
        description="What a beat does with a question nobody answers.",
    )


class AutomationSetParams(WireModel):
    lane_main: int | None = Field(default=None, ge=1, le=64)
    lane_subagent: int | None = Field(default=None, ge=1, le=256)
    lane_cron: int | None = Field(default=None, ge=1, le=64)
    heartbeat_minutes: int | None = Field(default=None, ge=0, le=24 * 60)
    active_start: str | None = Field(default=None, pattern=r"^\d\d:\d\d$")
    active_end: str | None = Field(default=None, pattern=r"^\d\d:\d\d$")
    default_mode: QueueMode | None = None
    heartbeat_unattended: UnattendedPolicy | None = None


class NotifyParams(WireModel):
    """The `automation/notify` notification: a scheduled run or heartbeat wants the author."""

    kind: Literal["heartbeat", "schedule"]
    title: str
    text: str
    thread_id: str | None = None
    run_id: str | None = None


AUTOMATION_GET = "automation/get"
AUTOMATION_SET = "automation/set"

AUTOMATION_METHODS: dict[str, MethodSpec] = {
    AUTOMATION_GET: MethodSpec(QueueEmpty, AutomationInfo, "Lanes, heartbeat, queue mode."),
    AUTOMATION_SET: MethodSpec(AutomationSetParams, AutomationInfo, "Change them."),
}

AUTOMATION_NOTIFY = "automation/notify"

AUTOMATION_NOTIFICATIONS: dict[str, type[WireModel]] = {
    AUTOMATION_NOTIFY: NotifyParams,
}
