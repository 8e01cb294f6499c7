"""`SchedulesController.create` and `update`: the request as typed, the list reloaded after a
save, and a refusal handed to the caller (the edit dialog) rather than announced."""

from __future__ import annotations

from desktop.controllers.schedules import SchedulesController
from sidecar.protocol import (
    ErrorObject,
    QueueEmpty,
    QueueErrorCode,
    ScheduleCreateParams,
    ScheduleInfo,
    ScheduleListResult,
    ScheduleUpdateParams,
)
from tests.desktop.support import FakeSender


def schedule_info(schedule_id: str, **fields: object) -> ScheduleInfo:
    base: dict[str, object] = {
        "id": schedule_id,
        "name": f"Job {schedule_id}",
        "kind": "cron",
        "spec": "0 9 * * 1-5",
        "timezone": "Europe/Berlin",
        "prompt": "standup notes",
        "thread_id": None,
        "missed": "run_once",
        "enabled": True,
        "next_fire_at": 1_800_000_000.0,
        "next_fires_local": ("2027-01-15T09:00:00+01:00",),
        "last_status": None,
        "created_at": 1.0,
    }
    return ScheduleInfo.model_validate(base | fields)


def refusal(reason: str, code: int = QueueErrorCode.SCHEDULE_INVALID) -> ErrorObject:
    return ErrorObject(code=code, message=f"[{reason}] refused", data={"reason": reason})


def test_creating_sends_the_params_and_reloads_the_list_with_the_new_schedule(
    fake_sender: FakeSender,
):
    controller = SchedulesController(fake_sender.api)
    failures: list[str] = []
    controller.failed.connect(failures.append)
    created: list[ScheduleInfo] = []
    params = ScheduleCreateParams(kind="cron", spec="0 9 * * 1-5", prompt="standup notes")
    controller.create(params).then(created.append)
    sent, pending = fake_sender.last("schedule/create")
    assert sent == params and fake_sender.methods() == ["schedule/create"]
    pending.resolve(schedule_info("n1"))
    assert [s.id for s in created] == ["n1"]
    listed, reply = fake_sender.last("schedule/list")
    assert listed == QueueEmpty()
    reply.resolve(
        ScheduleListResult(schedules=(schedule_info("n1"),), default_timezone="Europe/Berlin")
    )
    assert [s.id for s in controller.schedules] == ["n1"]
    assert failures == []


def test_a_refused_create_goes_to_the_caller_and_reloads_nothing(fake_sender: FakeSender):
    controller = SchedulesController(fake_sender.api)
    failures: list[str] = []
    controller.failed.connect(failures.append)
    errors: list[ErrorObject] = []
    params = ScheduleCreateParams(kind="cron", spec="61 * * * *", prompt="p")
    controller.create(params).then(None, errors.append)
    fake_sender.last("schedule/create")[1].reject(refusal("bad_cron"))
    assert [(e.code, e.data) for e in errors] == [
        (QueueErrorCode.SCHEDULE_INVALID, {"reason": "bad_cron"})
    ]
    assert fake_sender.methods() == ["schedule/create"]
    assert failures == []


def test_updating_sends_the_changed_fields_and_reloads_the_list(fake_sender: FakeSender):
    controller = SchedulesController(fake_sender.api)
    params = ScheduleUpdateParams(schedule_id="a", prompt="weekly review")
    controller.update(params)
    sent, pending = fake_sender.last("schedule/update")
    assert sent == params
    pending.resolve(schedule_info("a", prompt="weekly review"))
    fake_sender.last("schedule/list")[1].resolve(
        ScheduleListResult(
            schedules=(schedule_info("a", prompt="weekly review"),), default_timezone="UTC"
        )
    )
    assert [s.prompt for s in controller.schedules] == ["weekly review"]
    assert controller.default_timezone == "UTC"
