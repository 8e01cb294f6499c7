"""The scheduler on a real database file with an injected clock (nobody sleeps): DST days,
missed runs, crashes between claim and start, two processes claiming the same time."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from mcp_servers.schedule import Fire, Schedule, ScheduleBook
from mcp_servers.schedule.timing import local_iso
from sidecar.runtime.clock import ManualClock
from sidecar.runtime.scheduler import STOPPED, Scheduler, ScheduleTargetError

pytestmark = pytest.mark.anyio


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


class Starts:
    """Records each run the scheduler starts (the runtime's start is tested end to end)."""

    def __init__(self) -> None:
        self.fires: list[Fire] = []
        self.started = asyncio.Event()

    async def __call__(self, schedule: Schedule, fire: Fire) -> tuple[str | None, str | None]:
        self.fires.append(fire)
        self.started.set()
        if schedule.prompt == "on a deleted thread":
            raise ScheduleTargetError("its thread t-9 was deleted; the schedule is paused")
        if schedule.prompt == "on a busy thread":
            return None, "t-1"  # queued behind the thread's running turn
        return f"run-{len(self.fires)}", "t-1"


def _rig(path: Path, start: float) -> tuple[ScheduleBook, Scheduler, ManualClock, Starts]:
    clock = ManualClock(start)
    book = ScheduleBook(_connect(path), default_timezone="UTC", now=clock.now)
    starts = Starts()
    scheduler = Scheduler(book, starts, clock)
    book.changed = scheduler.poke
    return book, scheduler, clock, starts


class SleepingClock(ManualClock):
    """A manual clock that says when the scheduler has gone to sleep on it."""

    def __init__(self, start: float) -> None:
        super().__init__(start)
        self.sleeping = asyncio.Event()

    async def sleep(self, seconds: float, wake: asyncio.Event) -> None:
        self.sleeping.set()
        await super().sleep(seconds, wake)


def _at(zone: str, *parts: int) -> float:
    return datetime(*parts, tzinfo=ZoneInfo(zone)).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("zone", "spring", "autumn", "expected"),
    [
        (
            "Europe/Berlin",
            (2026, 3, 28),
            (2026, 10, 24),
            [
                "03-28T02:30+01:00",
                "03-29T03:00+02:00",
                "03-30T02:30+02:00",
                "10-24T02:30+02:00",
                "10-25T02:30+02:00",
                "10-26T02:30+01:00",
            ],
        ),
        (
            "America/New_York",
            (2026, 3, 7),
            (2026, 10, 31),
            [
                "03-07T02:30-05:00",
                "03-08T03:00-04:00",
                "03-09T02:30-04:00",
                "10-31T02:30-04:00",
                "11-01T02:30-05:00",
                "11-02T02:30-05:00",
            ],
        ),
    ],
)
async def test_a_daily_cron_fires_once_a_day_at_the_local_time_across_both_dst_changes(
    tmp_path: Path, zone: str, spring: tuple[int, ...], autumn: tuple[int, ...], expected: list[str]
):
    book, scheduler, clock, starts = _rig(tmp_path / "a.db", _at(zone, *spring, 0, 0))
    schedule = book.create(kind="cron", spec="30 2 * * *", prompt="daily", timezone=zone)
    for day in (spring, autumn):
        if clock.now() < _at(zone, *day, 0, 0):
            clock.advance_to(_at(zone, *day, 0, 0))
            book.set_enabled(schedule.id, True)  # resume from here: the months between skip
        for _ in range(3):
            nxt = book.get(schedule.id).next_fire_at or 0
            # A pass a minute early fires nothing; on time it fires; a second pass adds none.
            clock.advance_to(nxt - 60)
            assert await scheduler.tick() == []
            clock.advance_to(nxt)
            assert len(await scheduler.tick()) == 1
            assert await scheduler.tick() == []
    fired = [local_iso(f.scheduled_for, ZoneInfo(zone))[5:] for f in starts.fires]
    assert fired == expected
    assert [f.status for f in book.history(schedule.id)] == ["started"] * 6


async def test_after_an_eight_hour_sleep_run_once_runs_once_and_skip_records_why(tmp_path: Path):
    book, scheduler, clock, starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    once = book.create(kind="cron", spec="0 * * * *", prompt="hourly", name="once")
    skip = book.create(kind="interval", spec="1h", prompt="hourly", name="skip", missed="skip")
    clock.advance_to(_at("UTC", 2026, 6, 1, 8, 30))
    recorded = {f.schedule_id: f for f in await scheduler.tick()}
    assert (recorded[once.id].missed, recorded[once.id].reason) == (
        8,
        "ran once for 8 missed times",
    )
    assert recorded[skip.id].status == "skipped" and recorded[skip.id].missed == 8
    assert (
        recorded[skip.id].reason
        == "missed: Atrium was not running at 2026-06-01T08:00+00:00 (8 times)"
    )
    assert [f.schedule_id for f in starts.fires] == [once.id]
    assert book.get(once.id).next_fire_at == _at("UTC", 2026, 6, 1, 9, 0)


async def test_a_fire_claimed_before_a_crash_starts_after_it_and_a_running_one_is_not_rerun(
    tmp_path: Path,
):
    path = tmp_path / "a.db"
    book, _scheduler, clock, _starts = _rig(path, _at("UTC", 2026, 6, 1, 0, 0))
    a = book.create(kind="interval", spec="1h", prompt="a")
    b = book.create(kind="interval", spec="1h", prompt="b")
    clock.advance_to(_at("UTC", 2026, 6, 1, 1, 0))
    # The sidecar died after claiming both, with b's run already going.
    assert book.claim(a, book.get(a.id).next_fire_at or 0, None)
    assert book.claim(b, book.get(b.id).next_fire_at or 0, None)
    book.mark_fire(book.history(b.id)[0], "started", run_id="r-old")
    book2, scheduler2, _clock2, starts2 = _rig(path, clock.now())
    scheduler2.recover()
    await scheduler2.tick()
    assert [f.schedule_id for f in starts2.fires] == [a.id]
    assert (book2.history(b.id)[0].status, book2.history(b.id)[0].reason) == ("failed", STOPPED)


async def test_two_processes_claiming_the_same_time_run_it_once(tmp_path: Path):
    path = tmp_path / "a.db"
    start = _at("UTC", 2026, 6, 1, 0, 0)
    book1, scheduler1, clock1, starts1 = _rig(path, start)
    book1.create(kind="cron", spec="*/5 * * * *", prompt="p")
    _book2, scheduler2, clock2, starts2 = _rig(path, start)
    for minute in (5, 10, 15):
        clock1.advance_to(start + minute * 60)
        clock2.advance_to(start + minute * 60)
        await asyncio.gather(scheduler1.tick(), scheduler2.tick())
    times = sorted(f.scheduled_for for f in [*starts1.fires, *starts2.fires])
    assert times == [start + 300, start + 600, start + 900]


async def test_a_schedule_whose_thread_was_deleted_fails_with_the_reason_and_pauses(
    tmp_path: Path,
):
    book, scheduler, clock, _starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    schedule = book.create(kind="interval", spec="1h", prompt="on a deleted thread")
    clock.advance_to(book.get(schedule.id).next_fire_at or 0)
    await scheduler.tick()
    fire = book.history(schedule.id)[0]
    assert fire.status == "failed" and "was deleted" in (fire.reason or "")
    assert book.get(schedule.id).enabled is False


async def test_the_loop_sleeps_until_the_next_fire_and_wakes_when_the_clock_gets_there(
    tmp_path: Path,
):
    book, scheduler, clock, starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    schedule = book.create(kind="once", spec="2026-06-01T00:10:00Z", prompt="p")
    loop = asyncio.ensure_future(scheduler.run_forever())
    try:
        for _ in range(5):
            await asyncio.sleep(0)
        assert starts.fires == []
        clock.advance_to(book.get(schedule.id).next_fire_at or 0)
        async with asyncio.timeout(10):
            await starts.started.wait()
        run_now = book.request_run(schedule.id)
        async with asyncio.timeout(10):
            while len(starts.fires) < 2:
                starts.started.clear()
                await starts.started.wait()
        assert starts.fires[1].scheduled_for == run_now.scheduled_for
    finally:
        loop.cancel()


async def test_a_fire_on_a_busy_thread_is_recorded_as_queued_behind_its_turn(tmp_path: Path):
    book, scheduler, clock, _starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    schedule = book.create(kind="interval", spec="1h", prompt="on a busy thread")
    clock.advance_to(book.get(schedule.id).next_fire_at or 0)
    await scheduler.tick()
    fire = book.history(schedule.id)[0]
    assert (fire.status, fire.thread_id) == ("queued", "t-1")
    assert fire.reason == "queued behind the thread's running turn"
    scheduler.recover()  # a restart does not call a queued fire failed: its message waits
    assert book.history(schedule.id)[0].status == "queued"


async def test_a_schedule_another_process_creates_fires_without_waiting_for_the_poll(
    tmp_path: Path,
):
    path = tmp_path / "a.db"
    start = _at("UTC", 2026, 6, 1, 0, 0)
    clock = SleepingClock(start)
    book = ScheduleBook(_connect(path), default_timezone="UTC", now=clock.now)
    starts = Starts()
    scheduler = Scheduler(book, starts, clock)
    book.create(kind="once", spec="2026-06-02T00:00:00Z", prompt="tomorrow")
    # A standalone schedule server on the same file: its own connection and no poke.
    standalone = ScheduleBook(_connect(path), default_timezone="UTC", now=clock.now)
    watcher = asyncio.ensure_future(scheduler.watch_other_writers(every_s=0.01))
    loop = asyncio.ensure_future(scheduler.run_forever())
    try:
        async with asyncio.timeout(10):
            await clock.sleeping.wait()  # asleep until tomorrow's fire or POLL_S
        standalone.create(kind="once", spec="2026-06-01T00:00:20Z", prompt="from outside")
        # The loop sleeps until tomorrow's fire or POLL_S (30 s of this clock) unless poked: at
        # 20 s only a scheduler that saw the new schedule fires it.
        clock.advance_to(start + 20)
        async with asyncio.timeout(10):
            await starts.started.wait()
        assert [f.schedule_id for f in starts.fires] == [
            s.id for s in book.list() if s.prompt == "from outside"
        ]
    finally:
        watcher.cancel()
        loop.cancel()


async def test_the_sidecar_s_own_writes_do_not_wake_the_watcher(tmp_path: Path):
    book, _scheduler, _clock, _starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    before = book.data_version()
    for n in range(200):  # a day of the agent's own schedule edits
        book.create(kind="interval", spec="1h", prompt=f"p{n}")
    assert book.data_version() == before


async def test_two_passes_that_find_a_fire_claimed_while_it_starts_start_it_once(
    tmp_path: Path,
):
    """`schedule/run_now` runs a pass while the loop's pass (woken by the same request) may be
    starting the fire: the second waits for the first's start instead of starting it again."""
    book, scheduler, _clock, starts = _rig(tmp_path / "a.db", _at("UTC", 2026, 6, 1, 0, 0))
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow_start(schedule: Schedule, fire: Fire) -> tuple[str | None, str | None]:
        entered.set()
        await release.wait()
        return await starts(schedule, fire)

    scheduler = Scheduler(book, slow_start, scheduler.clock)
    schedule = book.create(kind="interval", spec="1h", prompt="now")
    requested = book.request_run(schedule.id)
    first = asyncio.ensure_future(scheduler.tick())
    async with asyncio.timeout(10):
        await entered.wait()
    second = asyncio.ensure_future(scheduler.tick())  # finds the fire claimed, still starting
    release.set()
    async with asyncio.timeout(10):
        await asyncio.gather(first, second)
    assert [f.scheduled_for for f in starts.fires] == [requested.scheduled_for]
    done = book.fire(schedule.id, requested.scheduled_for)
    assert (done.status, done.run_id) == ("started", "run-1")
