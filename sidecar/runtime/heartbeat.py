"""The heartbeat: every N minutes inside the active hours, `.atrium/HEARTBEAT.md` runs on the
heartbeat thread (in the `cron` lane). An answer of exactly `HEARTBEAT_OK` is recorded and
stays silent; any other answer (or a failure) notifies the author. A beat that does not run is
recorded with why: `quiet-hours`, `requests-in-flight` (the author's own turn is running) or
`empty-heartbeat-file`; one whose run needed an answer under the `skip` unattended policy
(`AutomationInfo.heartbeat_unattended`, see `sidecar.runtime.unattended`) is recorded skipped,
`needed-an-answer`. A beat's turn that goes on after its question (answered by the author, or
declined at its deadline) reports its end like the beat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from sidecar.protocol import AutomationInfo, HeartbeatBeat, NotifyParams
from sidecar.runtime.clock import Clock
from sidecar.runtime.runs import RunManager
from sidecar.runtime.unattended import SKIPPED, TurnNews, deadline_text
from sidecar.store import Store

log = logging.getLogger(__name__)

OK = "HEARTBEAT_OK"
FILE = Path(".atrium") / "HEARTBEAT.md"
INSTRUCTION = (
    "\n\n(This is a scheduled heartbeat. If nothing needs the author's attention, reply with "
    f"exactly {OK} and nothing else.)"
)
MAX_FILE_CHARS = 20_000
NEEDED_AN_ANSWER = "needed-an-answer"


def _no_hook(thread_id: str, run_id: str) -> None:
    del thread_id, run_id


def in_active_hours(now: float, zone: ZoneInfo, start: str, end: str) -> bool:
    """`start`..`end` as HH:MM local times; an end before the start spans midnight."""
    local = datetime.fromtimestamp(now, zone)
    minute = local.hour * 60 + local.minute
    a = int(start[:2]) * 60 + int(start[3:])
    b = int(end[:2]) * 60 + int(end[3:])
    if a == b:
        return True
    return a <= minute < b if a < b else minute >= a or minute < b


class Heartbeat:
    def __init__(  # noqa: PLR0917 - the composition root hands each part in
        self,
        store: Store,
        runs: RunManager,
        settings: Callable[[], AutomationInfo],
        workspace: Callable[[], Path],
        clock: Clock,
        zone: ZoneInfo,
        notify: Callable[[NotifyParams], None],
        *,
        started: Callable[[str, str], None] = _no_hook,
    ) -> None:
        """`started(thread_id, run_id)` hears of each beat's run as it starts (the unattended
        policy attaches to it)."""
        self._store = store
        self._repo = store.heartbeat
        self._runs = runs
        self._settings = settings
        self._workspace = workspace
        self._clock = clock
        self._zone = zone
        self._notify = notify
        self._started = started
        self._wake = asyncio.Event()
        self._runs_of_beats: set[str] = set()

    @property
    def thread_id(self) -> str | None:
        return self._repo.get_state("heartbeat_thread")

    def history(self, limit: int = 50) -> list[HeartbeatBeat]:
        return [
            HeartbeatBeat(
                at=b.at,
                status=b.status,  # pyright: ignore[reportArgumentType]
                reason=b.reason,
                text=b.text,
                run_id=b.run_id,
            )
            for b in self._repo.recent(limit)
            if b.status != "running"
        ]

    def poke(self) -> None:
        self._wake.set()

    async def beat(self) -> tuple[str, str | None]:
        """One beat now: returns (status, reason or run id)."""
        now = self._clock.now()
        info = self._settings()
        if not in_active_hours(now, self._zone, info.active_start, info.active_end):
            return self._skip(now, "quiet-hours")
        if self._runs.lanes.running("main") > 0:
            return self._skip(now, "requests-in-flight")
        text = self._read_file()
        if not text:
            return self._skip(now, "empty-heartbeat-file")
        thread_id = self._thread()
        if self._runs.is_busy(thread_id):
            return self._skip(now, "requests-in-flight")
        run_id = await self._runs.start(thread_id, text + INSTRUCTION, lane="cron")
        self._runs_of_beats.add(run_id)
        self._started(thread_id, run_id)
        self._repo.record("running", at=now, run_id=run_id)
        return "running", run_id

    def _skip(self, now: float, reason: str) -> tuple[str, str | None]:
        self._repo.record("skipped", at=now, reason=reason)
        return "skipped", reason

    def _read_file(self) -> str:
        path = self._workspace() / FILE
        try:
            return path.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS].strip()
        except OSError:
            return ""

    def _thread(self) -> str:
        known = self.thread_id
        if known is not None and self._store.has_thread(known):
            return known
        thread = self._store.create_thread("Heartbeat")
        self._repo.set_state("heartbeat_thread", thread.id)
        return thread.id

    def run_ended(
        self, thread_id: str, run_id: str, final: object, news: TurnNews | None = None
    ) -> None:
        """A run ended; a beat's is recorded and, unless it answered `HEARTBEAT_OK`, notifies.
        `news` says what became of its unattended turn: a run that goes on with a beat's turn
        notifies like the beat (its record stays with the beat's first run)."""
        beat = run_id in self._runs_of_beats
        self._runs_of_beats.discard(run_id)
        if not beat and (news is None or news.turn.source != "heartbeat"):
            return
        status, text = self._outcome(thread_id, final, news)
        if beat:
            reason = NEEDED_AN_ANSWER if status == "skipped" else None
            self._repo.finish(run_id, status, text, reason=reason)
        if status != "ok":
            self._notify(
                NotifyParams(
                    kind="heartbeat",
                    title="Heartbeat",
                    text=text,
                    thread_id=thread_id,
                    run_id=run_id,
                )
            )

    def _outcome(self, thread_id: str, final: object, news: TurnNews | None) -> tuple[str, str]:
        outcome = getattr(final, "type", "")
        if news is not None and news.what == "skipped":
            return "skipped", f"The heartbeat was skipped: {SKIPPED}."
        if outcome == "run_finished" and getattr(final, "outcome", "") == "completed":
            answer = self._last_answer(thread_id)
            return ("ok", answer.strip()) if answer.strip() == OK else ("notified", answer)
        if outcome == "run_finished":
            text = "The heartbeat needs an answer."
            if news is not None and news.deadline is not None:
                when = deadline_text(news.deadline, self._zone)
                text += f" Unanswered by {when}, it is declined and the beat goes on."
            return "notified", text
        return "failed", "The heartbeat run failed."

    def _last_answer(self, thread_id: str) -> str:
        for record in reversed(self._store.recent_messages(thread_id, 5)):
            if record.role == "assistant":
                return record.content
        return ""

    async def run_forever(self) -> None:
        while True:
            minutes = self._settings().heartbeat_minutes
            if minutes <= 0:
                self._wake.clear()
                await self._clock.sleep(60.0, self._wake)
                continue
            last = self._repo.last_at()
            due = (last or 0.0) + minutes * 60
            now = self._clock.now()
            if now >= due:
                try:
                    await self.beat()
                except Exception:
                    log.exception("heartbeat failed")
                    self._repo.record("failed", at=now, reason="could not start")
                continue
            self._wake.clear()
            await self._clock.sleep(min(60.0, due - now), self._wake)
