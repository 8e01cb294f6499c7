"""Unattended runs on the real runtime (store file, graph, checkpoints, the workspace server)
with a clock the test moves: a scheduled run whose model calls a tool that needs approval is
denied at its deadline and goes on, ends skipped, or waits and notifies, per its schedule's
policy; the author's answer before the deadline wins, also at the same moment; a live form is
declined or refused the same way; the heartbeat has its own policy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.protocol import FormInterrupt, RunCancelled, UnattendedPolicy
from sidecar.runtime.errors import NoSuchInterruptError, ThreadBusyError
from sidecar.runtime.heartbeat import FILE, NEEDED_AN_ANSWER
from sidecar.runtime.unattended import SKIPPED
from tests.sidecar.runtime.test_heartbeat import SleepingClock
from tests.sidecar.runtime.unattended_rig import FORM, NOON, AutoRig, ReactivePlanner, auto_rig

pytestmark = pytest.mark.anyio

DENIED = (
    "The author denied this call. Reason: nobody answered within 10 minutes (an unattended "
    "scheduled run), so it was declined"
)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[AutoRig]:
    async with auto_rig(tmp_path, SleepingClock(NOON)) as made:
        yield made


async def test_deny_after_declines_the_approval_at_its_deadline_and_the_run_goes_on(
    rig: AutoRig,
) -> None:
    schedule = rig.schedule("deny_after", 10)
    fire = await rig.run_now(schedule)
    assert fire.run_id is not None and fire.thread_id is not None
    await rig.run_to_end(fire.run_id)
    [asked] = rig.asked(fire.run_id)
    assert [i.id for i in rig.store.pending_interrupts(fire.thread_id)] == [asked]
    assert (rig.fire(fire).status, rig.fire(fire).reason) == (
        "waiting",
        "the run waits on an answer until 12:10 UTC; then it is declined",
    )
    assert [(n.kind, n.title, n.text) for n in rig.notes] == [
        (
            "schedule",
            "Night report",
            "A scheduled run needs an answer. Unanswered by 12:10 UTC, it is declined and the "
            "run goes on.",
        )
    ]

    rig.clock.advance_to(NOON + 10 * 60 - 1)
    assert await rig.auto.unattended.tick() == []
    rig.clock.advance_to(NOON + 10 * 60)
    assert await rig.auto.unattended.tick() == [asked]

    await rig.until(lambda: rig.thread_completed(fire.thread_id or ""))
    assert rig.planner.tool_results() == [DENIED]
    assert not (rig.workspace / "report.md").exists()
    assert rig.store.pending_interrupts(fire.thread_id) == []
    assert (rig.fire(fire).status, rig.fire(fire).reason) == (
        "finished",
        "a question nobody answered was declined at 12:10 UTC",
    )
    assert rig.store.unattended.turns() == [] and rig.store.unattended.deadlines() == []
    assert len(rig.notes) == 1  # a finished run says nothing more


async def test_skip_ends_the_run_at_its_first_question_and_the_tool_never_runs(
    rig: AutoRig,
) -> None:
    fire = await rig.run_now(rig.schedule("skip"))
    assert fire.run_id is not None and fire.thread_id is not None
    events = await rig.run_to_end(fire.run_id)

    assert isinstance(events[-1].event, RunCancelled)
    assert rig.asked(fire.run_id) == []  # the question never reached the window
    assert rig.store.pending_interrupts(fire.thread_id) == []
    assert not (rig.workspace / "report.md").exists()
    assert (rig.fire(fire).status, rig.fire(fire).reason) == ("skipped", SKIPPED)
    run = rig.store.run(fire.run_id)
    assert run is not None and run.status == "cancelled"
    assert rig.store.get_thread(fire.thread_id).status == "cancelled"
    assert [(n.kind, n.text) for n in rig.notes] == [
        ("schedule", "Skipped: it needed an answer and nobody was there.")
    ]
    assert len(rig.planner.seen) == 1 and rig.store.unattended.turns() == []


async def test_wait_keeps_the_question_pending_and_notifies_the_author(rig: AutoRig) -> None:
    fire = await rig.run_now(rig.schedule("wait"))
    assert fire.run_id is not None and fire.thread_id is not None
    await rig.run_to_end(fire.run_id)
    [asked] = rig.asked(fire.run_id)

    rig.clock.advance_to(NOON + 7 * 24 * 3600)
    assert await rig.auto.unattended.tick() == []

    assert [i.id for i in rig.store.pending_interrupts(fire.thread_id)] == [asked]
    assert (rig.fire(fire).status, rig.fire(fire).reason) == (
        "waiting",
        "the run waits on an answer",
    )
    assert [(n.kind, n.text, n.run_id) for n in rig.notes] == [
        ("schedule", "A scheduled run needs an answer.", fire.run_id)
    ]
    assert rig.store.unattended.deadlines() == []


async def test_a_schedule_made_before_the_policy_existed_waits(rig: AutoRig) -> None:
    made = rig.auto.book.create(kind="cron", spec="0 3 * * *", prompt="file the night report")
    assert (made.unattended, made.view()["unattended"]) == (
        "wait",
        {"action": "wait", "minutes": 30},
    )
    fire = await rig.run_now(made)
    assert fire.run_id is not None
    await rig.run_to_end(fire.run_id)
    assert rig.fire(fire).status == "waiting" and rig.store.unattended.deadlines() == []


async def test_the_authors_answer_just_before_the_deadline_wins(rig: AutoRig) -> None:
    fire = await rig.run_now(rig.schedule("deny_after", 10))
    assert fire.run_id is not None and fire.thread_id is not None
    await rig.run_to_end(fire.run_id)
    [asked] = rig.asked(fire.run_id)

    rig.clock.advance_to(NOON + 10 * 60 - 1)
    resumed = await rig.runtime.runs.resume(fire.thread_id, asked, {"decision": "allow_once"})
    rig.clock.advance_to(NOON + 10 * 60)
    assert await rig.auto.unattended.tick() == []  # the thread is busy with the answer
    await rig.run_to_end(resumed)
    assert await rig.auto.unattended.tick() == []  # and then the question is answered

    assert (rig.workspace / "report.md").read_text() == "written\n"
    assert len(rig.planner.tool_results()) == 1
    assert not rig.planner.tool_results()[0].startswith("The author denied")
    assert rig.store.unattended.deadlines() == []
    assert (rig.fire(fire).status, rig.fire(fire).reason) == (
        "finished",
        "it went on after the author's answer",
    )


@pytest.mark.parametrize("first", ["author", "deadline"])
async def test_an_answer_and_the_deadline_at_the_same_moment_answer_once(
    rig: AutoRig, first: str
) -> None:
    fire = await rig.run_now(rig.schedule("deny_after", 10))
    assert fire.run_id is not None and fire.thread_id is not None
    thread_id = fire.thread_id
    await rig.run_to_end(fire.run_id)
    [asked] = rig.asked(fire.run_id)
    rig.clock.advance_to(NOON + 10 * 60)

    async def author() -> str:
        return await rig.runtime.runs.resume(thread_id, asked, {"decision": "allow_once"})

    if first == "author":
        _, declined = await asyncio.gather(author(), rig.auto.unattended.tick())
        assert declined == []
    else:
        declined, refused = await asyncio.gather(
            rig.auto.unattended.tick(), author(), return_exceptions=True
        )
        assert declined == [asked]
        assert isinstance(refused, ThreadBusyError | NoSuchInterruptError)
    await rig.until(lambda: rig.thread_completed(thread_id))
    assert await rig.auto.unattended.tick() == []

    assert (rig.workspace / "report.md").exists() == (first == "author")
    assert len(rig.planner.tool_results()) == 1
    assert rig.planner.tool_results()[0].startswith("The author denied") == (first == "deadline")
    assert rig.store.pending_interrupts(thread_id) == []
    assert rig.store.unattended.deadlines() == []


async def test_a_live_form_under_deny_after_is_declined_at_its_deadline(tmp_path: Path) -> None:
    async with auto_rig(tmp_path, SleepingClock(NOON), ReactivePlanner(FORM)) as rig:
        fire = await rig.run_now(rig.schedule("deny_after", 10))
        assert fire.run_id is not None and fire.thread_id is not None
        await rig.until(lambda: bool(rig.asked(fire.run_id or "")))
        [asked] = rig.asked(fire.run_id)
        form = next(e.event.interrupt for e in rig.events if e.event.type == "interrupt")  # type: ignore[union-attr]
        assert isinstance(form, FormInterrupt) and form.live
        assert [n.text for n in rig.notes] == [
            "A scheduled run needs an answer. Unanswered by 12:10 UTC, it is declined and the "
            "run goes on."
        ]

        rig.clock.advance_to(NOON + 10 * 60)
        assert await rig.auto.unattended.tick() == [asked]
        await rig.run_to_end(fire.run_id)

        assert rig.planner.tool_results() == ["form: decline"]
        assert rig.fire(fire).status == "finished"


async def test_a_live_form_under_skip_is_refused_unasked_and_the_run_ends_skipped(
    tmp_path: Path,
) -> None:
    async with auto_rig(tmp_path, SleepingClock(NOON), ReactivePlanner(FORM)) as rig:
        fire = await rig.run_now(rig.schedule("skip"))
        assert fire.run_id is not None and fire.thread_id is not None
        events = await rig.run_to_end(fire.run_id)

        assert isinstance(events[-1].event, RunCancelled)
        assert rig.asked(fire.run_id) == [] and rig.store.pending_interrupts(fire.thread_id) == []
        assert (rig.fire(fire).status, rig.fire(fire).reason) == ("skipped", SKIPPED)
        assert [n.text for n in rig.notes] == ["Skipped: it needed an answer and nobody was there."]


async def test_the_loop_wakes_at_the_deadline_without_being_poked(rig: AutoRig) -> None:
    clock = rig.clock
    assert isinstance(clock, SleepingClock)
    loop = asyncio.create_task(rig.auto.unattended.run_forever())
    try:
        await clock.next_sleep(0)
        fire = await rig.run_now(rig.schedule("deny_after", 1))
        assert fire.run_id is not None and fire.thread_id is not None
        await rig.run_to_end(fire.run_id)
        await clock.next_sleep(clock.sleeps)  # it went back to sleep, now until the deadline
        assert rig.store.pending_interrupts(fire.thread_id) != []
        clock.advance_to(NOON + 60)
        await rig.until(lambda: rig.thread_completed(fire.thread_id or ""))
    finally:
        loop.cancel()
    assert rig.planner.tool_results() == [DENIED.replace("10 minutes", "1 minute")]


async def test_a_heartbeat_under_skip_is_recorded_skipped_with_its_reason(rig: AutoRig) -> None:
    (rig.workspace / FILE).parent.mkdir(parents=True, exist_ok=True)
    (rig.workspace / FILE).write_text("Write the report.\n", encoding="utf-8")
    rig.runtime.automation_settings.update(
        {"heartbeat_unattended": UnattendedPolicy(action="skip").model_dump()}
    )
    status, run_id = await rig.auto.heartbeat.beat()
    assert status == "running" and run_id is not None
    await rig.run_to_end(run_id)
    await rig.until(lambda: bool(rig.notes))

    beats = rig.auto.heartbeat.history()
    assert [(b.status, b.reason) for b in beats] == [("skipped", NEEDED_AN_ANSWER)]
    assert [(n.kind, n.text) for n in rig.notes] == [
        ("heartbeat", "The heartbeat was skipped: it needed an answer and nobody was there.")
    ]
    assert not (rig.workspace / "report.md").exists()


async def test_a_heartbeat_under_deny_after_goes_on_and_reports_its_answer(rig: AutoRig) -> None:
    (rig.workspace / FILE).parent.mkdir(parents=True, exist_ok=True)
    (rig.workspace / FILE).write_text("Write the report.\n", encoding="utf-8")
    rig.runtime.automation_settings.update(
        {"heartbeat_unattended": {"action": "deny_after", "minutes": 5}}
    )
    _, run_id = await rig.auto.heartbeat.beat()
    assert run_id is not None
    await rig.run_to_end(run_id)
    thread_id = rig.auto.heartbeat.thread_id
    assert thread_id is not None

    rig.clock.advance_to(NOON + 5 * 60)
    assert len(await rig.auto.unattended.tick()) == 1
    await rig.until(lambda: rig.thread_completed(thread_id))

    assert rig.planner.tool_results() == [
        "The author denied this call. Reason: nobody answered within 5 minutes (an unattended "
        "heartbeat run), so it was declined"
    ]
    texts = [n.text for n in rig.notes]
    assert texts[0].startswith("The heartbeat needs an answer. Unanswered by 12:05 UTC")
    assert texts[1].startswith("after: The author denied this call.")
