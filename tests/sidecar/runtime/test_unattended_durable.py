"""Unattended deadlines outlast the sidecar and hold up in numbers: a restart while a question
waits keeps its deadline (neither reset nor lost), and a day of scheduled runs that each need an
approval, with the scheduler's and the deadlines' own loops running, all end with nothing left
pending."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sidecar.runtime.test_heartbeat import SleepingClock
from tests.sidecar.runtime.test_unattended import DENIED
from tests.sidecar.runtime.unattended_rig import NOON, auto_rig

pytestmark = pytest.mark.anyio

RUNS = 50


async def test_a_restart_while_a_question_waits_keeps_its_deadline(tmp_path: Path) -> None:
    async with auto_rig(tmp_path, SleepingClock(NOON)) as first:
        fire = await first.run_now(first.schedule("deny_after", 10))
        assert fire.run_id is not None and fire.thread_id is not None
        thread_id = fire.thread_id
        await first.run_to_end(fire.run_id)
        [asked] = first.asked(fire.run_id)
        deadlines = first.store.unattended.deadlines()
        assert [(d.interrupt_id, d.deadline) for d in deadlines] == [(asked, NOON + 600)]

    # The sidecar is back 8 minutes later: the question has 2 minutes left, not 10 again.
    async with auto_rig(tmp_path, SleepingClock(NOON + 8 * 60)) as second:
        second.auto.unattended.recover()
        assert await second.auto.unattended.tick() == []
        assert second.store.unattended.deadlines() == deadlines
        assert [i.id for i in second.store.pending_interrupts(thread_id)] == [asked]

        second.clock.advance_to(NOON + 10 * 60)
        assert await second.auto.unattended.tick() == [asked]
        await second.until(lambda: second.thread_completed(thread_id))
        assert second.planner.tool_results() == [DENIED]
        assert second.fire(fire).status == "finished"
        assert second.store.unattended.turns() == []


async def test_a_restart_after_the_deadline_declines_the_question_at_once(tmp_path: Path) -> None:
    async with auto_rig(tmp_path, SleepingClock(NOON)) as first:
        fire = await first.run_now(first.schedule("deny_after", 10))
        assert fire.run_id is not None and fire.thread_id is not None
        thread_id = fire.thread_id
        await first.run_to_end(fire.run_id)

    async with auto_rig(tmp_path, SleepingClock(NOON + 3600)) as second:
        second.auto.start()
        await second.until(lambda: second.thread_completed(thread_id))
        assert second.planner.tool_results() == [DENIED]
        assert second.store.pending_interrupts(thread_id) == []


async def test_a_day_of_scheduled_runs_that_need_approval_all_end_declined(
    tmp_path: Path,
) -> None:
    async with auto_rig(tmp_path, SleepingClock(NOON)) as rig:
        schedule = rig.auto.book.create(
            kind="interval",
            spec="28m",
            prompt="file the report",
            unattended="deny_after",
            deny_after_minutes=10,
        )
        rig.auto.start()
        for n in range(1, RUNS + 1):
            due = rig.auto.book.get(schedule.id).next_fire_at
            assert due is not None
            rig.clock.advance_to(due)

            def started(count: int = n) -> bool:
                fires = rig.auto.book.history(schedule.id)
                return len(fires) == count and all(f.run_id for f in fires)

            await rig.until(started)
            run_id = rig.auto.book.history(schedule.id)[0].run_id
            assert run_id is not None
            await rig.run_to_end(run_id)  # it asked
        assert rig.clock.now() - NOON < 24 * 3600
        rig.auto.book.set_enabled(schedule.id, False)
        rig.clock.advance_to(rig.clock.now() + 3600)

        fires = rig.auto.book.history(schedule.id)
        threads = [f.thread_id or "" for f in fires]
        await rig.until(lambda: all(rig.thread_completed(t) for t in threads), within=120)
        await rig.until(
            lambda: all(f.status == "finished" for f in rig.auto.book.history(schedule.id))
        )
        reasons = {(f.reason or "")[:40] for f in rig.auto.book.history(schedule.id)}
        assert reasons == {"a question nobody answered was declined "}
        assert len(set(threads)) == RUNS
        assert all(rig.store.pending_interrupts(t) == [] for t in threads)
        assert rig.store.unattended.deadlines() == [] and rig.store.unattended.turns() == []
        assert rig.planner.tool_results() == [DENIED] * RUNS
        assert not (rig.workspace / "report.md").exists()
