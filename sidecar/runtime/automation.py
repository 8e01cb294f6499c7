"""Work that starts itself, wired: the schedule book and its scheduler, the heartbeat, the
unattended-run policy of their turns (`sidecar.runtime.unattended`), and what happens when
their runs end (the fire's record, a notification when the author is needed). Scheduled and
heartbeat runs go through the `cron` lane."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import ValidationError

from mcp_servers.schedule import Fire, Schedule, ScheduleRefusal, local_iso, zone
from sidecar.protocol import NotifyParams, RunFailed, RunFinished, UnattendedPolicy
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.clock import Clock
from sidecar.runtime.heartbeat import Heartbeat
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.scheduler import Scheduler, ScheduleTargetError
from sidecar.runtime.unattended import SKIPPED, TurnNews, Unattended, deadline_text
from sidecar.store import Store

log = logging.getLogger(__name__)

DECLINED = "a question nobody answered was declined"
ANSWERED = "it went on after the author's answer"


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
        self._settings = settings
        self._notify = notify
        self.clock = clock
        self.zone_name = zone_name
        self.book = store.open_schedule_book(
            default_timezone=zone_name, now=clock.now, changed=self._changed
        )
        self.scheduler = Scheduler(self.book, self._start_scheduled, clock)
        self.unattended = Unattended(store, runs, clock, self._on_question)
        self.heartbeat = Heartbeat(
            store,
            runs,
            settings.load,
            workspace,
            clock,
            zone(zone_name),
            notify,
            started=self._beat_started,
        )
        self._tasks: list[asyncio.Task[Any]] = []
        runs.add_end_listener(self._run_ended)

    def _changed(self) -> None:
        if hasattr(self, "scheduler"):
            self.scheduler.poke()

    def start(self) -> None:
        """Recover what a dead sidecar left, then fire schedules, beat and answer the
        questions of unattended runs at their deadlines from now on."""
        if self._tasks:
            return
        self.scheduler.recover()
        self._tasks = [
            asyncio.ensure_future(self.scheduler.run_forever()),
            asyncio.ensure_future(self.scheduler.watch_other_writers()),
            asyncio.ensure_future(self.heartbeat.run_forever()),
            asyncio.ensure_future(self.unattended.run_forever()),
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
            if queued:  # behind the author's own turn: the author is there, it waits as any
                return None, schedule.thread_id
            self._attach(schedule, schedule.thread_id, run_id)
            return run_id, schedule.thread_id
        when = local_iso(fire.scheduled_for, schedule.timing().zone)
        thread = self._store.create_thread(f"{schedule.name} · {when}"[:200])
        run_id = await self._runs.start(thread.id, schedule.prompt, lane="cron")
        self._attach(schedule, thread.id, run_id)
        return run_id, thread.id

    def _attach(self, schedule: Schedule, thread_id: str, run_id: str) -> None:
        try:
            policy = UnattendedPolicy.model_validate(
                {"action": schedule.unattended, "minutes": schedule.deny_after_minutes}
            )
        except ValidationError:  # a row some other writer got wrong: the safe default
            log.warning("schedule %s has a bad unattended policy; it waits", schedule.id)
            policy = UnattendedPolicy()
        self.unattended.attach(
            thread_id,
            run_id,
            policy,
            source="schedule",
            source_id=schedule.id,
            label=schedule.name,
        )

    def _beat_started(self, thread_id: str, run_id: str) -> None:
        policy = self._settings.load().heartbeat_unattended
        self.unattended.attach(
            thread_id, run_id, policy, source="heartbeat", source_id="", label="Heartbeat"
        )

    def _run_ended(self, thread_id: str, run_id: str, final: Any) -> None:
        news = self.unattended.run_ended(thread_id, run_id)
        self.heartbeat.run_ended(thread_id, run_id, final, news)
        if news is not None:
            if news.turn.source == "schedule":
                self._scheduled_turn(news, run_id)
            return
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

    def _scheduled_turn(self, news: TurnNews, run_id: str) -> None:
        """A run of a scheduled turn ended: the fire of the turn records how, and the author
        hears of a question, a skip or a failure."""
        final = news.final
        text = ""
        if news.what == "skipped":
            status, reason = "skipped", SKIPPED
            text = f"Skipped: {SKIPPED}."
        elif news.what == "asked":
            status, reason = "waiting", "the run waits on an answer"
            text = "A scheduled run needs an answer."
            if news.deadline is not None:
                when = deadline_text(news.deadline, self._zone_of(news.turn.source_id))
                reason += f" until {when}; then it is declined"
                text += f" Unanswered by {when}, it is declined and the run goes on."
        elif isinstance(final, RunFinished):
            status, reason = "finished", self._finished_reason(news.turn.first_run_id)
        elif isinstance(final, RunFailed):
            status, reason = "failed", final.error.message
            text = f"A scheduled run failed: {final.error.message}"
        else:
            status, reason = "cancelled", "cancelled"
        self.scheduler.run_ended(news.turn.first_run_id, status, reason)
        if text:
            self._notify(
                NotifyParams(
                    kind="schedule",
                    title=news.turn.label,
                    text=text,
                    thread_id=news.turn.thread_id,
                    run_id=run_id,
                )
            )

    def _finished_reason(self, first_run_id: str) -> str | None:
        """A finished turn's fire keeps the reason it has (a decline, a missed time), but not
        that it waits on an answer: the author gave one."""
        fire = self.book.fire_of_run(first_run_id)
        return ANSWERED if fire is not None and fire.status == "waiting" else None

    def _on_question(self, news: TurnNews) -> None:
        """What became of an unattended turn while no run of it ended: a live question (the
        author is told), a question declined at its deadline (its fire says so), a skipping
        turn found waiting at start-up (its fire is skipped; the author is told)."""
        turn = news.turn
        who = "The heartbeat" if turn.source == "heartbeat" else "A scheduled run"
        if news.what == "declined":
            if turn.source == "schedule" and news.deadline is not None:
                when = deadline_text(news.deadline, self._zone_of(turn.source_id))
                self.scheduler.run_ended(turn.first_run_id, "started", f"{DECLINED} at {when}")
            return
        if news.what == "skipped":
            text = f"Skipped: {SKIPPED}."
            if turn.source == "schedule":
                self.scheduler.run_ended(turn.first_run_id, "skipped", SKIPPED)
        else:
            text = f"{who} needs an answer."
            if news.deadline is not None:
                when = deadline_text(news.deadline, self._zone_of(turn.source_id))
                text += f" Unanswered by {when}, it is declined and the run goes on."
        self._notify(
            NotifyParams(
                kind="heartbeat" if turn.source == "heartbeat" else "schedule",
                title=turn.label,
                text=text,
                thread_id=turn.thread_id,
                run_id=turn.run_id,
            )
        )

    def _zone_of(self, schedule_id: str) -> ZoneInfo:
        try:
            return self.book.get(schedule_id).timing().zone if schedule_id else zone(self.zone_name)
        except ScheduleRefusal:
            return zone(self.zone_name)

    def _exists(self, fire: Fire) -> bool:
        return any(s.id == fire.schedule_id for s in self.book.list())
