"""The heartbeat's own loop on the in-process runtime (real store file, real runs, scripted
planner) with a clock the test moves: beats every N minutes and never twice for one period,
quiet hours and the author's own turn skip with their reason, and a failed beat notifies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from sidecar.protocol import AutomationInfo, NotifyParams
from sidecar.runtime.clock import ManualClock
from sidecar.runtime.heartbeat import FILE, OK, Heartbeat
from sidecar.store.heartbeat import BeatRecord, HeartbeatRepo
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import Gate, answer

pytestmark = pytest.mark.anyio

NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC).timestamp()
MINUTES = 30


class SleepingClock(ManualClock):
    """A manual clock that says each time the heartbeat goes to sleep on it."""

    def __init__(self, start: float) -> None:
        super().__init__(start)
        self.sleeps = 0
        self.slept = asyncio.Event()

    async def sleep(self, seconds: float, wake: asyncio.Event) -> None:
        self.sleeps += 1
        self.slept.set()
        await super().sleep(seconds, wake)

    async def next_sleep(self, after: int) -> None:
        """Wait until the loop has gone to sleep more than `after` times."""
        async with asyncio.timeout(30):
            while self.sleeps <= after:
                self.slept.clear()
                await self.slept.wait()


class Beats:
    def __init__(self, rig: Rig, clock: SleepingClock, info: AutomationInfo) -> None:
        self.rig = rig
        self.clock = clock
        self.info = info
        self.notes: list[NotifyParams] = []
        self.repo = HeartbeatRepo(rig.store.conn)
        self.heartbeat = Heartbeat(
            rig.store,
            rig.runs,
            lambda: self.info,
            lambda: rig.workspace,
            clock,
            ZoneInfo("UTC"),
            self.notes.append,
        )
        rig.runs.add_end_listener(self.heartbeat.run_ended)

    def recorded(self) -> list[BeatRecord]:
        return list(reversed(self.repo.recent(100)))

    async def ran(self, record: BeatRecord) -> None:
        assert record.run_id is not None
        await self.rig.finish(record.run_id)


@pytest.fixture
async def beats(rig: Rig) -> AsyncIterator[Beats]:
    (rig.workspace / FILE).parent.mkdir(parents=True, exist_ok=True)
    (rig.workspace / FILE).write_text("Check the build.\n", encoding="utf-8")
    yield Beats(rig, SleepingClock(NOON), AutomationInfo(heartbeat_minutes=MINUTES))


async def test_the_loop_beats_once_per_period_and_an_ok_answer_stays_silent(
    beats: Beats,
) -> None:
    beats.rig.planner.script += [answer(OK), answer(OK)]
    loop = asyncio.create_task(beats.heartbeat.run_forever())
    try:
        await beats.clock.next_sleep(0)
        first = beats.recorded()
        assert [(b.status, b.at) for b in first] == [("running", NOON)]
        await beats.ran(first[0])

        # Half-way through the period and one second before its end: no second beat.
        for when in (NOON + MINUTES * 30, NOON + MINUTES * 60 - 1):
            sleeps = beats.clock.sleeps
            beats.clock.advance_to(when)
            await beats.clock.next_sleep(sleeps)
            assert len(beats.recorded()) == 1

        sleeps = beats.clock.sleeps
        beats.clock.advance_to(NOON + MINUTES * 60)
        await beats.clock.next_sleep(sleeps)
        second = beats.recorded()
        assert [b.at for b in second] == [NOON, NOON + MINUTES * 60]
        await beats.ran(second[1])
    finally:
        loop.cancel()
    assert [(b.status, b.text) for b in beats.recorded()] == [("ok", OK), ("ok", OK)]
    assert beats.notes == []
    # Each beat ran on the one heartbeat thread, in the cron lane.
    thread_id = beats.heartbeat.thread_id
    assert thread_id is not None
    assert [m.role for m in beats.rig.store.recent_messages(thread_id, 10)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


async def test_a_beat_while_the_authors_turn_runs_is_skipped_with_its_reason(
    beats: Beats,
) -> None:
    gate = Gate()
    beats.rig.planner.script += [gate, answer("the author's answer")]
    author = beats.rig.store.create_thread("Author")
    run_id = await beats.rig.runs.start(author.id, "a long question")
    async with asyncio.timeout(30):
        await gate.entered.wait()

    assert await beats.heartbeat.beat() == ("skipped", "requests-in-flight")

    gate.release.set()
    await beats.rig.finish(run_id)
    assert [(b.status, b.reason) for b in beats.recorded()] == [("skipped", "requests-in-flight")]
    assert beats.heartbeat.thread_id is None  # no heartbeat thread was made for a skip


async def test_outside_the_active_hours_the_loop_records_quiet_hours(beats: Beats) -> None:
    beats.info = AutomationInfo(heartbeat_minutes=MINUTES, active_start="13:00", active_end="02:00")
    loop = asyncio.create_task(beats.heartbeat.run_forever())
    try:
        await beats.clock.next_sleep(0)
    finally:
        loop.cancel()
    assert [(b.status, b.reason) for b in beats.recorded()] == [("skipped", "quiet-hours")]
    assert beats.rig.runs.lanes.running("cron") == 0


async def test_a_heartbeat_that_is_off_never_beats(beats: Beats) -> None:
    beats.info = AutomationInfo(heartbeat_minutes=0)
    loop = asyncio.create_task(beats.heartbeat.run_forever())
    try:
        await beats.clock.next_sleep(0)
        sleeps = beats.clock.sleeps
        beats.clock.advance_to(NOON + 24 * 3600)
        await beats.clock.next_sleep(sleeps)
    finally:
        loop.cancel()
    assert beats.recorded() == []


async def test_a_beat_whose_run_fails_notifies_the_author(beats: Beats) -> None:
    from sidecar.llm.types import PlannerError

    beats.rig.planner.script += [PlannerError("unreachable", "connection refused")]
    status, run_id = await beats.heartbeat.beat()
    assert status == "running"
    assert run_id is not None
    await beats.rig.finish(run_id)
    assert [(b.status, b.text) for b in beats.recorded()] == [
        ("failed", "The heartbeat run failed.")
    ]
    assert [(n.kind, n.run_id) for n in beats.notes] == [("heartbeat", run_id)]


async def test_an_answer_other_than_ok_notifies_with_the_answer(beats: Beats) -> None:
    beats.rig.planner.script += [answer("The build is red since 09:12.")]
    _, run_id = await beats.heartbeat.beat()
    assert run_id is not None
    await beats.rig.finish(run_id)
    assert [(n.kind, n.text) for n in beats.notes] == [
        ("heartbeat", "The build is red since 09:12.")
    ]
    assert [b.status for b in beats.recorded()] == ["notified"]


def test_the_heartbeat_file_lives_in_the_workspaces_atrium_folder() -> None:
    assert Path(".atrium", "HEARTBEAT.md") == FILE
