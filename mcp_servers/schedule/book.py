"""The schedule book: schedules and their fire records in SQLite, plain SQL only.

Inside Atrium the book shares the sidecar's one database connection; standalone it opens the
database file itself. A fire record's key is (schedule_id, scheduled_for): claiming a fire is
inserting that row, so each scheduled time is claimed at most once, whoever asks and however
often the process restarts.

Each schedule carries what its run does with a question nobody answers (`unattended`: `wait`,
`deny_after` its `deny_after_minutes`, or `skip`); the sidecar's runtime applies it. The columns
came with the book's schema version 2: `add_unattended` gives a version 1 table them (the
schema registry's step inside Atrium, and the book itself when it opens a file standalone), and
a schedule made before reads as `wait`, which is what it did.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from .errors import ErrorCode, ScheduleRefusal
from .timing import Timing, make_timing, next_after, upcoming, zone

SCHEDULE_SCHEMA = """
CREATE TABLE IF NOT EXISTS schedules (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    timezone TEXT NOT NULL,
    prompt TEXT NOT NULL,
    thread_id TEXT,
    missed TEXT NOT NULL DEFAULT 'run_once',
    enabled INTEGER NOT NULL DEFAULT 1,
    next_fire_at REAL,
    anchor REAL NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_status TEXT,
    last_run_id TEXT,
    unattended TEXT NOT NULL DEFAULT 'wait',
    deny_after_minutes INTEGER NOT NULL DEFAULT 30
);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules(enabled, next_fire_at);
CREATE TABLE IF NOT EXISTS schedule_fires (
    schedule_id TEXT NOT NULL,
    scheduled_for REAL NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    run_id TEXT,
    thread_id TEXT,
    missed INTEGER NOT NULL DEFAULT 0,
    manual INTEGER NOT NULL DEFAULT 0,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (schedule_id, scheduled_for)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS schedule_fires_open ON schedule_fires(status);
CREATE INDEX IF NOT EXISTS schedule_fires_run ON schedule_fires(run_id);
"""

MAX_PROMPT_CHARS = 20_000
MAX_NAME_CHARS = 200
MAX_SCHEDULES = 10_000
POLICIES = ("run_once", "skip")
UNATTENDED = ("wait", "deny_after", "skip")
DEFAULT_DENY_AFTER_MINUTES = 30
MAX_DENY_AFTER_MINUTES = 7 * 24 * 60
_UNATTENDED_COLUMNS = (
    ("unattended", "TEXT NOT NULL DEFAULT 'wait'"),
    ("deny_after_minutes", f"INTEGER NOT NULL DEFAULT {DEFAULT_DENY_AFTER_MINUTES}"),
)


def add_unattended(conn: sqlite3.Connection) -> None:
    """Give a schedules table of the book's schema version 1 the unattended-run policy columns
    (idempotent: a column already there is left as it is). Its schedules wait, as they did."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(schedules)")}
    for column, definition in _UNATTENDED_COLUMNS:
        if column not in columns:
            conn.execute(f"ALTER TABLE schedules ADD COLUMN {column} {definition}")


@dataclass(frozen=True, slots=True)
class Schedule:
    id: str
    name: str
    kind: str
    spec: str
    timezone: str
    prompt: str
    thread_id: str | None
    missed: str
    enabled: bool
    next_fire_at: float | None
    anchor: float
    created_at: float
    last_status: str | None
    last_run_id: str | None
    unattended: str = "wait"
    deny_after_minutes: int = DEFAULT_DENY_AFTER_MINUTES

    def timing(self) -> Timing:
        return Timing(self.kind, self.spec, zone(self.timezone), self.anchor)

    def view(self) -> dict[str, Any]:
        """What tools and the panel show: the schedule and its next fire times, local."""
        after = self.next_fire_at
        nexts = upcoming(self.timing(), after - 1e-3) if self.enabled and after is not None else []
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "spec": self.spec,
            "timezone": self.timezone,
            "prompt": self.prompt,
            "thread_id": self.thread_id,
            "missed": self.missed,
            "enabled": self.enabled,
            "next_fire_at": self.next_fire_at,
            "next_fires_local": nexts,
            "last_status": self.last_status,
            "last_run_id": self.last_run_id,
            "created_at": self.created_at,
            "unattended": {"action": self.unattended, "minutes": self.deny_after_minutes},
        }


@dataclass(frozen=True, slots=True)
class Fire:
    schedule_id: str
    scheduled_for: float
    status: str
    reason: str | None
    run_id: str | None
    thread_id: str | None
    missed: int
    manual: bool
    recorded_at: float


def _schedule(row: sqlite3.Row) -> Schedule:
    return Schedule(
        id=row["id"],
        name=row["name"],
        kind=row["kind"],
        spec=row["spec"],
        timezone=row["timezone"],
        prompt=row["prompt"],
        thread_id=row["thread_id"],
        missed=row["missed"],
        enabled=bool(row["enabled"]),
        next_fire_at=row["next_fire_at"],
        anchor=row["anchor"],
        created_at=row["created_at"],
        last_status=row["last_status"],
        last_run_id=row["last_run_id"],
        unattended=row["unattended"],
        deny_after_minutes=row["deny_after_minutes"],
    )


def _fire(row: sqlite3.Row) -> Fire:
    return Fire(
        schedule_id=row["schedule_id"],
        scheduled_for=row["scheduled_for"],
        status=row["status"],
        reason=row["reason"],
        run_id=row["run_id"],
        thread_id=row["thread_id"],
        missed=row["missed"],
        manual=bool(row["manual"]),
        recorded_at=row["recorded_at"],
    )


class ScheduleBook:
    """Schedules and fires. `now` is the clock (injectable); `default_timezone` names the zone
    of schedules created without one; `changed` is called after every change (the sidecar's
    scheduler wakes on it)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        default_timezone: str,
        now: Callable[[], float] = time.time,
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        conn.row_factory = sqlite3.Row
        conn.executescript(SCHEDULE_SCHEMA)
        add_unattended(conn)
        self.conn = conn
        self.default_timezone = default_timezone
        self.now = now
        self.changed = changed

    @contextmanager
    def _tx(self) -> Generator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ---- the author's and the agent's operations ---------------------------------------------

    def create(
        self,
        *,
        kind: str,
        spec: str,
        prompt: str,
        timezone: str | None = None,
        thread_id: str | None = None,
        name: str = "",
        missed: str = "run_once",
        unattended: str = "wait",
        deny_after_minutes: int = DEFAULT_DENY_AFTER_MINUTES,
    ) -> Schedule:
        """Raises:
        ScheduleRefusal: bad timing, zone, prompt, thread or policy (nothing is stored)."""
        now = self.now()
        tz_name = timezone or self.default_timezone
        timing = make_timing(kind, spec, tz_name, now=now, anchor=now)
        self._check_text(prompt, name, missed)
        _check_unattended(unattended, deny_after_minutes)
        self._check_thread(thread_id)
        count = self.conn.execute("SELECT COUNT(*) FROM schedules").fetchone()[0]
        if count >= MAX_SCHEDULES:
            raise ScheduleRefusal(ErrorCode.TOO_MANY, f"at most {MAX_SCHEDULES} schedules")
        schedule = Schedule(
            id=uuid.uuid4().hex[:12],
            name=name.strip() or _default_name(kind, timing.spec),
            kind=kind,
            spec=timing.spec,
            timezone=tz_name,
            prompt=prompt,
            thread_id=thread_id,
            missed=missed,
            enabled=True,
            next_fire_at=next_after(timing, now),
            anchor=now,
            created_at=now,
            last_status=None,
            last_run_id=None,
            unattended=unattended,
            deny_after_minutes=deny_after_minutes,
        )
        self.conn.execute(
            "INSERT INTO schedules(id, name, kind, spec, timezone, prompt, thread_id, missed,"
            " enabled, next_fire_at, anchor, created_at, updated_at, unattended,"
            " deny_after_minutes) VALUES (?,?,?,?,?,?,?,?,1,?,?,?,?,?,?)",
            (
                schedule.id,
                schedule.name,
                kind,
                schedule.spec,
                tz_name,
                prompt,
                thread_id,
                missed,
                schedule.next_fire_at,
                now,
                now,
                now,
                unattended,
                deny_after_minutes,
            ),
        )
        self.changed()
        return schedule

    def get(self, schedule_id: str) -> Schedule:
        """Raises:
        ScheduleRefusal: no such schedule."""
        row = self.conn.execute("SELECT * FROM schedules WHERE id = ?", (schedule_id,)).fetchone()
        if row is None:
            raise ScheduleRefusal(ErrorCode.NO_SUCH_SCHEDULE, f"no schedule {schedule_id!r}")
        return _schedule(row)

    def list(self) -> list[Schedule]:
        rows = self.conn.execute("SELECT * FROM schedules ORDER BY created_at, id").fetchall()
        return [_schedule(r) for r in rows]

    def update(
        self,
        schedule_id: str,
        *,
        spec: str | None = None,
        timezone: str | None = None,
        prompt: str | None = None,
        name: str | None = None,
        missed: str | None = None,
        unattended: str | None = None,
        deny_after_minutes: int | None = None,
    ) -> Schedule:
        """Change a schedule; its next fire is computed from now.

        Raises:
            ScheduleRefusal: no such schedule, or a bad new value (nothing changes).
        """
        old = self.get(schedule_id)
        now = self.now()
        new = replace(
            old,
            spec=spec if spec is not None else old.spec,
            timezone=timezone if timezone is not None else old.timezone,
            prompt=prompt if prompt is not None else old.prompt,
            name=name.strip() if name is not None and name.strip() else old.name,
            missed=missed if missed is not None else old.missed,
            unattended=unattended if unattended is not None else old.unattended,
            deny_after_minutes=(
                deny_after_minutes if deny_after_minutes is not None else old.deny_after_minutes
            ),
        )
        timing = make_timing(new.kind, new.spec, new.timezone, now=now, anchor=now)
        self._check_text(new.prompt, new.name, new.missed)
        _check_unattended(new.unattended, new.deny_after_minutes)
        new = replace(new, spec=timing.spec, anchor=now, next_fire_at=next_after(timing, now))
        self.conn.execute(
            "UPDATE schedules SET spec = ?, timezone = ?, prompt = ?, name = ?, missed = ?,"
            " anchor = ?, next_fire_at = ?, updated_at = ?, unattended = ?,"
            " deny_after_minutes = ? WHERE id = ?",
            (
                new.spec,
                new.timezone,
                new.prompt,
                new.name,
                new.missed,
                new.anchor,
                new.next_fire_at,
                now,
                new.unattended,
                new.deny_after_minutes,
                schedule_id,
            ),
        )
        self.changed()
        return new

    def set_enabled(self, schedule_id: str, enabled: bool) -> Schedule:
        """Pause, or resume from now on (the times missed while paused are not run).

        Raises:
            ScheduleRefusal: no such schedule.
        """
        old = self.get(schedule_id)
        now = self.now()
        nxt = next_after(old.timing(), now) if enabled else old.next_fire_at
        self.conn.execute(
            "UPDATE schedules SET enabled = ?, next_fire_at = ?, updated_at = ? WHERE id = ?",
            (int(enabled), nxt, now, schedule_id),
        )
        self.changed()
        return replace(old, enabled=enabled, next_fire_at=nxt)

    def delete(self, schedule_id: str) -> None:
        """Raises:
        ScheduleRefusal: no such schedule."""
        self.get(schedule_id)
        with self._tx():
            self.conn.execute("DELETE FROM schedule_fires WHERE schedule_id = ?", (schedule_id,))
            self.conn.execute("DELETE FROM schedules WHERE id = ?", (schedule_id,))
        self.changed()

    def request_run(self, schedule_id: str) -> Fire:
        """Record a manual fire (run now); the scheduler starts it.

        Raises:
            ScheduleRefusal: no such schedule.
        """
        self.get(schedule_id)
        now = self.now()
        while self._fire_exists(schedule_id, now):
            now += 1e-3
        self.conn.execute(
            "INSERT INTO schedule_fires(schedule_id, scheduled_for, status, reason, manual,"
            " recorded_at) VALUES (?,?,'claimed','run now',1,?)",
            (schedule_id, now, now),
        )
        self.changed()
        return self.fire(schedule_id, now)

    def history(self, schedule_id: str, limit: int = 100) -> list[Fire]:
        """Raises:
        ScheduleRefusal: no such schedule."""
        self.get(schedule_id)
        rows = self.conn.execute(
            "SELECT * FROM schedule_fires WHERE schedule_id = ?"
            " ORDER BY scheduled_for DESC LIMIT ?",
            (schedule_id, limit),
        ).fetchall()
        return [_fire(r) for r in rows]

    # ---- the scheduler's side ----------------------------------------------------------------

    def due(self, now: float) -> list[Schedule]:
        rows = self.conn.execute(
            "SELECT * FROM schedules WHERE enabled = 1 AND next_fire_at IS NOT NULL"
            " AND next_fire_at <= ? ORDER BY next_fire_at",
            (now,),
        ).fetchall()
        return [_schedule(r) for r in rows]

    def data_version(self) -> int:
        """SQLite's `data_version`: it changes when another connection (another process, e.g. a
        standalone schedule server on this file) commits, never for this connection's own."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def next_wake(self) -> float | None:
        row = self.conn.execute(
            "SELECT MIN(next_fire_at) FROM schedules WHERE enabled = 1"
        ).fetchone()
        return row[0]

    def claim(
        self,
        schedule: Schedule,
        scheduled_for: float,
        next_fire_at: float | None,
        *,
        status: str = "claimed",
        reason: str | None = None,
        missed: int = 0,
    ) -> bool:
        """Record the fire of `scheduled_for` and move the schedule on, in one transaction.
        False: that time was claimed before (nothing changes)."""
        now = self.now()
        with self._tx():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO schedule_fires(schedule_id, scheduled_for, status, reason,"
                " missed, recorded_at) VALUES (?,?,?,?,?,?)",
                (schedule.id, scheduled_for, status, reason, missed, now),
            )
            self.conn.execute(
                "UPDATE schedules SET next_fire_at = ?, last_status = COALESCE(?, last_status)"
                " WHERE id = ?",
                (next_fire_at, "skipped" if status == "skipped" else None, schedule.id),
            )
        return cur.rowcount == 1

    def fire(self, schedule_id: str, scheduled_for: float) -> Fire:
        row = self.conn.execute(
            "SELECT * FROM schedule_fires WHERE schedule_id = ? AND scheduled_for = ?",
            (schedule_id, scheduled_for),
        ).fetchone()
        return _fire(row)

    def open_fires(self, status: str) -> list[Fire]:
        rows = self.conn.execute(
            "SELECT * FROM schedule_fires WHERE status = ? ORDER BY scheduled_for", (status,)
        ).fetchall()
        return [_fire(r) for r in rows]

    def mark_fire(
        self,
        fire: Fire,
        status: str,
        *,
        reason: str | None = None,
        run_id: str | None = None,
        thread_id: str | None = None,
    ) -> None:
        self.conn.execute(
            "UPDATE schedule_fires SET status = ?, reason = COALESCE(?, reason),"
            " run_id = COALESCE(?, run_id), thread_id = COALESCE(?, thread_id)"
            " WHERE schedule_id = ? AND scheduled_for = ?",
            (status, reason, run_id, thread_id, fire.schedule_id, fire.scheduled_for),
        )
        self.conn.execute(
            "UPDATE schedules SET last_status = ?, last_run_id = COALESCE(?, last_run_id)"
            " WHERE id = ?",
            (status, run_id, fire.schedule_id),
        )

    def fire_of_run(self, run_id: str) -> Fire | None:
        row = self.conn.execute(
            "SELECT * FROM schedule_fires WHERE run_id = ?", (run_id,)
        ).fetchone()
        return _fire(row) if row is not None else None

    # ---- checks ------------------------------------------------------------------------------

    def _fire_exists(self, schedule_id: str, at: float) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM schedule_fires WHERE schedule_id = ? AND scheduled_for = ?",
            (schedule_id, at),
        ).fetchone()
        return row is not None

    def _check_text(self, prompt: str, name: str, missed: str) -> None:
        if not prompt.strip():
            raise ScheduleRefusal(ErrorCode.PROMPT_TOO_LONG, "the prompt is empty")
        if len(prompt) > MAX_PROMPT_CHARS:
            raise ScheduleRefusal(
                ErrorCode.PROMPT_TOO_LONG,
                f"the prompt has {len(prompt)} characters; the most is {MAX_PROMPT_CHARS} "
                "(put long material in a workspace file and name it in the prompt)",
            )
        if len(name) > MAX_NAME_CHARS:
            raise ScheduleRefusal(ErrorCode.PROMPT_TOO_LONG, f"a name has at most {MAX_NAME_CHARS}")
        if missed not in POLICIES:
            raise ScheduleRefusal(
                ErrorCode.BAD_POLICY, f"unknown missed-run policy {missed!r}; use run_once or skip"
            )

    def _check_thread(self, thread_id: str | None) -> None:
        if thread_id is None:
            return
        if not self.thread_exists(thread_id):
            raise ScheduleRefusal(
                ErrorCode.NO_SUCH_THREAD,
                f"no thread {thread_id!r} (deleted?); leave thread_id empty for a new thread "
                "per run",
            )

    def thread_exists(self, thread_id: str) -> bool:
        try:
            row = self.conn.execute(
                "SELECT 1 FROM threads WHERE id = ? AND parent_id IS NULL", (thread_id,)
            ).fetchone()
        except sqlite3.OperationalError:  # a database without Atrium's threads
            return False
        return row is not None


def _check_unattended(action: str, minutes: int) -> None:
    if action not in UNATTENDED:
        raise ScheduleRefusal(
            ErrorCode.BAD_UNATTENDED,
            f"unknown unattended-run policy {action!r}; use wait, deny_after or skip",
        )
    if not 1 <= minutes <= MAX_DENY_AFTER_MINUTES:
        raise ScheduleRefusal(
            ErrorCode.BAD_UNATTENDED,
            f"deny_after_minutes is {minutes}; give 1 to {MAX_DENY_AFTER_MINUTES} minutes",
        )


def _default_name(kind: str, spec: str) -> str:
    return {"once": f"Once at {spec}", "interval": f"Every {spec}", "cron": f"Cron {spec}"}[kind]
