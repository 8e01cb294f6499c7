"""The scheduler: fires the schedule book's schedules on time, each scheduled time at most once.

Each pass takes the schedules that are due. A fire is recorded (claimed) in the database, with
the schedule's next fire time, in one transaction before its run starts; the record's key
(schedule, scheduled time) makes a second claim of the same time a no-op, across restarts and
processes. A schedule more than GRACE_S late, or due several times over (Atrium was closed, the
machine slept), applies its missed-run policy: `run_once` runs once for all the missed times,
`skip` records one skipped fire with the reason. At start-up a fire that was claimed but never
started is started (it never ran); one that was running when the sidecar died is recorded
failed, not run again. A fire is started by one pass only (another that finds it claimed
meanwhile waits for that start). Between passes the scheduler sleeps until the next fire time
(at most POLL_S) or until poked. `watch_other_writers` pokes it within WATCH_S of another
process committing to the file (a standalone schedule server editing schedules): one `PRAGMA
data_version` a second, which the sidecar's own writes do not change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from mcp_servers.schedule import Fire, Schedule, ScheduleBook, fires_between, next_after
from sidecar.runtime.clock import Clock

log = logging.getLogger(__name__)

GRACE_S = 60.0
POLL_S = 30.0
WATCH_S = 1.0
STOPPED = "Atrium stopped while this run was going; it was not run again."

StartRun = Callable[[Schedule, Fire], Awaitable[tuple[str | None, str | None]]]


class ScheduleTargetError(Exception):
    """The schedule cannot run (its thread was deleted): the fire fails with this reason."""


class Scheduler:
    def __init__(self, book: ScheduleBook, start_run: StartRun, clock: Clock) -> None:
        self.book = book
        self._start_run = start_run
        self.clock = clock
        self._wake = asyncio.Event()
        self._recovered = False
        self._starting: dict[tuple[str, float], asyncio.Future[None]] = {}

    def poke(self) -> None:
        """Something changed: look again now."""
        self._wake.set()

    async def watch_other_writers(self, every_s: float = WATCH_S) -> None:
        """Poke the scheduler whenever another connection has committed to the database."""
        last = self.book.data_version()
        while True:
            await asyncio.sleep(every_s)
            try:
                now = self.book.data_version()
            except Exception:  # a closed or busy database: look again next time
                log.debug("reading data_version failed", exc_info=True)
                continue
            if now != last:
                last = now
                self.poke()

    def recover(self) -> None:
        """After a start: runs that a dead sidecar left going are recorded failed."""
        for fire in self.book.open_fires("started"):
            self.book.mark_fire(fire, "failed", reason=STOPPED)
        self._recovered = True

    async def run_forever(self) -> None:
        if not self._recovered:
            self.recover()
        while True:
            try:
                await self.tick()
            except Exception:  # a pass that fails is retried on the next one
                log.exception("scheduler pass failed")
            now = self.clock.now()
            wake = self.book.next_wake()
            delay = POLL_S if wake is None else min(POLL_S, max(0.0, wake - now))
            self._wake.clear()
            if self.book.open_fires("claimed"):
                continue
            await self.clock.sleep(delay, self._wake)

    async def tick(self) -> list[Fire]:
        """One pass at the clock's now: claim what is due, start what was claimed. Returns the
        fires recorded in this pass."""
        now = self.clock.now()
        recorded: list[Fire] = []
        for schedule in self.book.due(now):
            fire = self._claim_due(schedule, now)
            if fire is not None:
                recorded.append(fire)
        for fire in self.book.open_fires("claimed"):
            await self._start_once(fire)
        return recorded

    async def _start_once(self, fire: Fire) -> None:
        """Start a claimed fire, or wait for the start another pass already began: the loop's
        pass and `schedule/run_now`'s may both find it claimed while its run is starting."""
        key = (fire.schedule_id, fire.scheduled_for)
        starting = self._starting.get(key)
        if starting is not None:
            await asyncio.shield(starting)
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._starting[key] = done
        try:
            await self._start(fire)
        finally:
            del self._starting[key]
            done.set_result(None)

    def _claim_due(self, schedule: Schedule, now: float) -> Fire | None:
        first = schedule.next_fire_at
        assert first is not None
        timing = schedule.timing()
        times = [first, *fires_between(timing, first, now)]
        latest = times[-1]
        following = next_after(timing, now)
        missed = len(times) > 1 or now - latest > GRACE_S
        if not missed:
            claimed = self.book.claim(schedule, latest, following)
        elif schedule.missed == "skip":
            when = datetime.fromtimestamp(latest, timing.zone).isoformat(timespec="minutes")
            reason = f"missed: Atrium was not running at {when}" + (
                f" ({len(times)} times)" if len(times) > 1 else ""
            )
            claimed = self.book.claim(
                schedule, latest, following, status="skipped", reason=reason, missed=len(times)
            )
        else:
            reason = f"ran once for {len(times)} missed time" + ("s" if len(times) > 1 else "")
            claimed = self.book.claim(schedule, latest, following, reason=reason, missed=len(times))
        return self.book.fire(schedule.id, latest) if claimed else None

    async def _start(self, fire: Fire) -> None:
        try:
            schedule = self.book.get(fire.schedule_id)
        except Exception:
            self.book.mark_fire(fire, "failed", reason="the schedule was deleted")
            return
        try:
            run_id, thread_id = await self._start_run(schedule, fire)
        except ScheduleTargetError as exc:
            self.book.mark_fire(fire, "failed", reason=str(exc))
            self.book.set_enabled(schedule.id, False)
            return
        except Exception as exc:
            log.exception("scheduled run of %s failed to start", schedule.id)
            self.book.mark_fire(fire, "failed", reason=f"{type(exc).__name__}: {exc}")
            return
        if run_id is None:  # its thread was busy: the prompt waits in its queue (followup)
            reason = "queued behind the thread's running turn"
            self.book.mark_fire(fire, "queued", reason=reason, thread_id=thread_id)
            return
        self.book.mark_fire(fire, "started", run_id=run_id, thread_id=thread_id)

    def run_ended(self, run_id: str, status: str, reason: str | None = None) -> Fire | None:
        """A scheduled turn's run ended or waits: its fire (that of the turn's first run, if it
        started or waits on the author) records how."""
        fire = self.book.fire_of_run(run_id)
        if fire is None or fire.status not in {"started", "waiting"}:
            return None
        self.book.mark_fire(fire, status, reason=reason)
        return self.book.fire(fire.schedule_id, fire.scheduled_for)
