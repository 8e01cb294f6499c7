"""Heartbeat records: every beat, run or skipped, with its reason; the heartbeat thread's id."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sidecar.store.repository import Repository

HEARTBEAT_SCHEMA = """
CREATE TABLE IF NOT EXISTS heartbeat_beats (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    text TEXT,
    run_id TEXT
);
CREATE TABLE IF NOT EXISTS automation_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class BeatRecord:
    seq: int
    at: float
    status: str
    reason: str | None
    text: str | None
    run_id: str | None


class HeartbeatRepo(Repository):
    """Beats, and the automation's small key-value state (the heartbeat thread's id)."""

    def record(
        self,
        status: str,
        *,
        at: float | None = None,
        reason: str | None = None,
        text: str | None = None,
        run_id: str | None = None,
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO heartbeat_beats(at, status, reason, text, run_id) VALUES (?,?,?,?,?)",
            (time.time() if at is None else at, status, reason, text, run_id),
        )
        return int(cur.lastrowid or 0)

    def finish(
        self, run_id: str, status: str, text: str | None, *, reason: str | None = None
    ) -> bool:
        cur = self.conn.execute(
            "UPDATE heartbeat_beats SET status = ?, text = ?, reason = COALESCE(?, reason)"
            " WHERE run_id = ? AND status = 'running'",
            (status, text, reason, run_id),
        )
        return cur.rowcount == 1

    def recent(self, limit: int = 50) -> list[BeatRecord]:
        rows = self.conn.execute(
            "SELECT * FROM heartbeat_beats ORDER BY seq DESC LIMIT ?", (limit,)
        ).fetchall()
        return [
            BeatRecord(r["seq"], r["at"], r["status"], r["reason"], r["text"], r["run_id"])
            for r in rows
        ]

    def last_at(self) -> float | None:
        row = self.conn.execute("SELECT MAX(at) FROM heartbeat_beats").fetchone()
        return row[0]

    def get_state(self, key: str) -> str | None:
        row = self.conn.execute(
            "SELECT value FROM automation_state WHERE key = ?", (key,)
        ).fetchone()
        return str(row[0]) if row is not None else None

    def set_state(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO automation_state(key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
