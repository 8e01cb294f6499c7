"""`schedule/*` carry each schedule's unattended-run policy: created, read back, changed alone
by `schedule/update`, refused out of range by the wire model; `automation/set` keeps the
heartbeat's. Real services over a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from mcp_servers.schedule import MAX_DENY_AFTER_MINUTES as BOOK_MAX
from sidecar.handlers.services import Services
from sidecar.protocol import (
    AUTOMATION_SET,
    MAX_DENY_AFTER_MINUTES,
    SCHEDULE_CREATE,
    SCHEDULE_LIST,
    SCHEDULE_UPDATE,
    AutomationInfo,
    AutomationSetParams,
    QueueEmpty,
    ScheduleCreateParams,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleUpdateParams,
    UnattendedPolicy,
)
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services, close_services

pytestmark = pytest.mark.anyio


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[Services]:
    services = build_services(tmp_path)
    yield services
    await close_services(services)


async def test_a_schedules_policy_is_created_listed_and_changed_alone(svc: Services) -> None:
    created = await call(
        svc,
        SCHEDULE_CREATE,
        ScheduleCreateParams(
            kind="cron",
            spec="0 3 * * *",
            prompt="night report",
            unattended=UnattendedPolicy(action="deny_after", minutes=45),
        ),
        ScheduleInfo,
    )
    assert created.unattended == UnattendedPolicy(action="deny_after", minutes=45)

    changed = await call(
        svc,
        SCHEDULE_UPDATE,
        ScheduleUpdateParams(schedule_id=created.id, unattended=UnattendedPolicy(action="skip")),
        ScheduleInfo,
    )
    assert changed.unattended == UnattendedPolicy(action="skip", minutes=30)
    assert (changed.spec, changed.prompt, changed.missed) == (
        "0 3 * * *",
        "night report",
        "run_once",
    )

    renamed = await call(
        svc,
        SCHEDULE_UPDATE,
        ScheduleUpdateParams(schedule_id=created.id, name="Night"),
        ScheduleInfo,
    )
    assert renamed.unattended.action == "skip"
    listed = await call(svc, SCHEDULE_LIST, QueueEmpty(), ScheduleListResult)
    assert [s.unattended for s in listed.schedules] == [UnattendedPolicy(action="skip")]


async def test_a_schedule_created_without_a_policy_waits(svc: Services) -> None:
    created = await call(
        svc,
        SCHEDULE_CREATE,
        ScheduleCreateParams(kind="interval", spec="1h", prompt="check"),
        ScheduleInfo,
    )
    assert created.unattended == UnattendedPolicy(action="wait", minutes=30)


def test_minutes_out_of_range_and_unknown_actions_are_refused_by_the_wire_model() -> None:
    for bad in ({"minutes": 0}, {"minutes": MAX_DENY_AFTER_MINUTES + 1}, {"action": "allow"}):
        with pytest.raises(ValidationError) as caught:
            UnattendedPolicy.model_validate(bad)
        assert caught.value.errors()[0]["loc"] == (next(iter(bad)),)
    assert MAX_DENY_AFTER_MINUTES == BOOK_MAX


async def test_the_heartbeats_policy_is_a_setting_kept_across_other_changes(
    svc: Services,
) -> None:
    policy = UnattendedPolicy(action="deny_after", minutes=5)
    info = await call(
        svc, AUTOMATION_SET, AutomationSetParams(heartbeat_unattended=policy), AutomationInfo
    )
    assert info.heartbeat_unattended == policy
    again = await call(svc, AUTOMATION_SET, AutomationSetParams(lane_cron=2), AutomationInfo)
    assert (again.heartbeat_unattended, again.lane_cron) == (policy, 2)
    assert svc.automation_settings.load().heartbeat_unattended == policy
