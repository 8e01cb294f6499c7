"""Work that starts itself, wired: the schedule book and its scheduler, the heartbeat, and
what happens when their runs end (the fire's record, a notification when the author is
needed). Scheduled and heartbeat runs go through the `cron` lane."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_servers.schedule import Fire, Schedule, local_iso, zone
from sidecar.protocol import NotifyParams
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.clock import Clock
from sidecar.runtime.heartbeat import Heartbeat
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.scheduler import Scheduler, ScheduleTargetError
from sidecar.store import Store


class Automation:
    def __init__(  # noqa: PLR0917 - the composition root hands each part in
        self,
        store: Store,
        runs: RunManager,
        queue: QueueDesk,
        settings: AutomationSettings,
        workspace: Callable[[], Path],
        notify: Callable[[NotifyParams], None],
        clock: Clock,
        zone_name: str,
    ) -> None:
        self._store = store
        self._runs = runs
        self._queue = queue
        self._notify = notify
        self.clock = clock
        self.zone_name = zone_name
        self.book = store.open_schedule_book(
            default_timezone=zone_name, now=clock.now, changed=self._changed
        )
        self.scheduler = Scheduler(self.book, self._start_scheduled, clock)
        self.heartbeat = Heartbeat(
            store, runs, settings.load, workspace, clock, zone(zone_name), notify
        )
        self._tasks: list[asyncio.Task[Any]] = []
        runs.add_end_listener(self._run_ended)

    def _changed(self) -> None:
        if hasattr(self, "scheduler"):
            self.scheduler.poke()

    def start(self) -> None:
        """Recover what a dead sidecar left, then fire schedules and beat from now on."""
        if self._tasks:
            return
        self.scheduler.recover()
        self._tasks = [
            asyncio.ensure_future(self.scheduler.run_forever()),
            asyncio.ensure_future(self.scheduler.watch_other_writers()),
            asyncio.ensure_future(self.heartbeat.run_forever()),
        ]

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def _start_scheduled(self, schedule: Schedule, fire: Fire) -> tuple[str | None, str]:
        if schedule.thread_id is not None:
            if not self._store.has_thread(schedule.thread_id):
                raise ScheduleTargetError(
                    f"its thread {schedule.thread_id} was deleted; the schedule is paused"
                )
            run_id, queued = await self._queue.submit(
                schedule.thread_id, schedule.prompt, "followup", lane="cron"
            )
            return (None if queued else run_id), schedule.thread_id
        when = local_iso(fire.scheduled_for, schedule.timing().zone)
        thread = self._store.create_thread(f"{schedule.name} · {when}"[:200])
        return await self._runs.start(thread.id, schedule.prompt, lane="cron"), thread.id

    def _run_ended(self, thread_id: str, run_id: str, final: Any) -> None:
        self.heartbeat.run_ended(thread_id, run_id, final)
        kind = getattr(final, "type", "")
        if kind == "run_finished" and final.outcome == "completed":
            self.scheduler.run_ended(run_id, "finished")
            return
        if kind == "run_finished":
            fire = self.scheduler.run_ended(run_id, "waiting", "the run waits on an answer")
            text = "A scheduled run needs an answer."
        elif kind == "run_failed":
            fire = self.scheduler.run_ended(run_id, "failed", final.error.message)
            text = f"A scheduled run failed: {final.error.message}"
        else:
            fire = self.scheduler.run_ended(run_id, "cancelled", "cancelled")
            text = ""
        if fire is not None and text:
            name = self.book.get(fire.schedule_id).name if self._exists(fire) else "schedule"
            self._notify(
                NotifyParams(
                    kind="schedule", title=name, text=text, thread_id=thread_id, run_id=run_id
                )
            )

    def _exists(self, fire: Fire) -> bool:
        return any(s.id == fire.schedule_id for s in self.book.list())
