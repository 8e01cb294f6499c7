"""Unattended turns: a scheduled or heartbeat turn's policy for questions nobody answers, and
the deadline of each question it asked under `deny_after`.

Both are rows, so a restart keeps them: a deadline is recorded once, when the question is first
seen, and a question asked again (a node re-run) keeps it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from sidecar.store.repository import Repository

UNATTENDED_SCHEMA = """
CREATE TABLE IF NOT EXISTS unattended_turns (
    thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL,
    first_run_id TEXT NOT NULL,
    source TEXT NOT NULL,
    source_id TEXT NOT NULL,
    label TEXT NOT NULL,
    action TEXT NOT NULL,
    minutes INTEGER NOT NULL,
    since REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS unattended_deadlines (
    interrupt_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    deadline REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS unattended_deadlines_by_thread ON unattended_deadlines(thread_id);
"""


@dataclass(frozen=True, slots=True)
class UnattendedTurn:
    """A turn a schedule (`source_id` its id) or the heartbeat started: `run_id` is its newest
    run (a resume continues the turn under a new id), `first_run_id` the one that began it
    (its fire's or beat's record); `action` and `minutes` are its policy."""

    thread_id: str
    run_id: str
    first_run_id: str
    source: str
    source_id: str
    label: str
    action: str
    minutes: int
    since: float


@dataclass(frozen=True, slots=True)
class Deadline:
    interrupt_id: str
    thread_id: str
    deadline: float


def _turn(row: sqlite3.Row) -> UnattendedTurn:
    return UnattendedTurn(
        thread_id=row["thread_id"],
        run_id=row["run_id"],
        first_run_id=row["first_run_id"],
        source=row["source"],
        source_id=row["source_id"],
        label=row["label"],
        action=row["action"],
        minutes=row["minutes"],
        since=row["since"],
    )


class UnattendedRepo(Repository):
    def attach(self, turn: UnattendedTurn) -> None:
        """Record the thread's unattended turn (a new one replaces the thread's last, whose
        deadlines go with it)."""
        self.conn.execute("DELETE FROM unattended_deadlines WHERE thread_id = ?", (turn.thread_id,))
        self.conn.execute(
            "INSERT INTO unattended_turns(thread_id, run_id, first_run_id, source, source_id,"
            " label, action, minutes, since) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(thread_id) DO UPDATE SET run_id = excluded.run_id,"
            " first_run_id = excluded.first_run_id, source = excluded.source,"
            " source_id = excluded.source_id, label = excluded.label,"
            " action = excluded.action, minutes = excluded.minutes, since = excluded.since",
            (
                turn.thread_id,
                turn.run_id,
                turn.first_run_id,
                turn.source,
                turn.source_id,
                turn.label,
                turn.action,
                turn.minutes,
                turn.since,
            ),
        )

    def turn(self, thread_id: str) -> UnattendedTurn | None:
        row = self.conn.execute(
            "SELECT * FROM unattended_turns WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return _turn(row) if row is not None else None

    def turns(self) -> list[UnattendedTurn]:
        rows = self.conn.execute("SELECT * FROM unattended_turns ORDER BY since").fetchall()
        return [_turn(r) for r in rows]

    def move_turn(self, thread_id: str, run_id: str) -> None:
        """The turn goes on in run `run_id` (a resume of it)."""
        self.conn.execute(
            "UPDATE unattended_turns SET run_id = ? WHERE thread_id = ?", (run_id, thread_id)
        )

    def end_turn(self, thread_id: str) -> None:
        """The turn is over (or the author took the thread over): it and its deadlines go."""
        self.conn.execute("DELETE FROM unattended_deadlines WHERE thread_id = ?", (thread_id,))
        self.conn.execute("DELETE FROM unattended_turns WHERE thread_id = ?", (thread_id,))

    def set_deadline(self, interrupt_id: str, thread_id: str, deadline: float) -> float:
        """Record the question's deadline unless it has one; returns the one it has."""
        self.conn.execute(
            "INSERT INTO unattended_deadlines(interrupt_id, thread_id, deadline) VALUES (?,?,?)"
            " ON CONFLICT(interrupt_id) DO NOTHING",
            (interrupt_id, thread_id, deadline),
        )
        row = self.conn.execute(
            "SELECT deadline FROM unattended_deadlines WHERE interrupt_id = ?", (interrupt_id,)
        ).fetchone()
        return float(row[0])

    def deadlines(self) -> list[Deadline]:
        rows = self.conn.execute(
            "SELECT interrupt_id, thread_id, deadline FROM unattended_deadlines"
            " ORDER BY deadline, interrupt_id"
        ).fetchall()
        return [Deadline(r["interrupt_id"], r["thread_id"], r["deadline"]) for r in rows]

    def drop_deadline(self, interrupt_id: str) -> None:
        self.conn.execute(
            "DELETE FROM unattended_deadlines WHERE interrupt_id = ?", (interrupt_id,)
        )
