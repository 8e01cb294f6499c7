"""`TeamController` over a recording sender: a task's events, envelopes and sub-thread are asked
for in the task's own thread, and refusals are reported."""

from __future__ import annotations

from desktop.controllers.plans import CoordController
from desktop.models.transcript import INITIAL_PAGE, Transcript
from sidecar.protocol import (
    ErrorObject,
    PlanListResult,
    TaskEventsParams,
    TaskRef,
    ThreadGetParams,
    ThreadGetResult,
    ThreadMessagesParams,
)
from tests.desktop.coord_support import plan, task
from tests.desktop.support import FakeSender, message, thread_info


def coord_with_a_plan_in_t2(fake_sender: FakeSender) -> CoordController:
    coord = CoordController(fake_sender.api)
    coord.load_all()
    listed = plan(task("n", "succeeded", plan_id="p2"), plan_id="p2", thread_id="t2")
    fake_sender.last("plan/list")[1].resolve(PlanListResult(plans=(listed,)))
    return coord


def test_events_and_envelopes_are_asked_for_in_the_tasks_thread(fake_sender: FakeSender):
    coord = coord_with_a_plan_in_t2(fake_sender)
    assert coord.team.task_events("p2", "n") is not None
    assert fake_sender.last("task/events")[0] == TaskEventsParams(
        thread_id="t2", plan_id="p2", task_id="n", limit=2000
    )
    assert coord.team.task_envelopes("p2", "n") is not None
    assert fake_sender.last("task/envelopes")[0] == TaskRef(
        thread_id="t2", plan_id="p2", task_id="n"
    )
    assert coord.team.task_events("p-unknown", "n") is None


def test_a_refusal_is_reported(fake_sender: FakeSender):
    coord = coord_with_a_plan_in_t2(fake_sender)
    reported: list[str] = []
    coord.error_reported.connect(reported.append)
    coord.team.task_envelopes("p2", "n")
    fake_sender.last("task/envelopes")[1].reject(ErrorObject(code=-32041, message="gone"))
    assert reported == ["Reading task n's messages failed: gone"]


def test_a_sub_thread_is_read_into_its_own_transcript_and_paged_back(fake_sender: FakeSender):
    coord = coord_with_a_plan_in_t2(fake_sender)
    transcript = Transcript()
    reader = coord.team.sub_thread("s-n", transcript)
    reader.load()
    params, pending = fake_sender.last("thread/get")
    assert params == ThreadGetParams(thread_id="s-n", limit=INITIAL_PAGE)
    page = tuple(message("user", f"step {i}", f"m{i}", "s-n") for i in range(INITIAL_PAGE))
    pending.resolve(
        ThreadGetResult(thread=thread_info("s-n"), messages=page, interrupts=(), status="idle")
    )
    assert transcript.thread_id == "s-n" and len(transcript) == INITIAL_PAGE
    assert reader.pager.load_older() is not None
    assert fake_sender.last("thread/messages")[0] == ThreadMessagesParams(
        thread_id="s-n", before_id="m0", limit=200
    )
