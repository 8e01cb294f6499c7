"""The message queue of busy threads: messages the author sent while a run was going.

A row moves queued → delivered (into a run: a steer message at a planner step, or the first
message of the next turn) → answered (that run completed); a queued row may be edited or
withdrawn. Delivery marks the row and writes the author's message in one transaction, so after
a crash a message is either still queued or in the conversation, never both or neither.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from dataclasses import dataclass

from sidecar.store.repository import Repository

QUEUE_SCHEMA = """
CREATE TABLE IF NOT EXISTS queued_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    mode TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'queued',
    run_id TEXT,
    created_at REAL NOT NULL,
    delivered_at REAL,
    answered_at REAL,
    lane TEXT NOT NULL DEFAULT 'main'
);
CREATE INDEX IF NOT EXISTS queued_by_thread ON queued_messages(thread_id, status, seq);
CREATE TABLE IF NOT EXISTS thread_queue_modes (
    thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    mode TEXT NOT NULL
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class QueuedRecord:
    id: str
    thread_id: str
    mode: str
    text: str
    status: str
    run_id: str | None
    created_at: float
    delivered_at: float | None
    answered_at: float | None
    lane: str = "main"
    """The runtime lane its turn runs in: `main` for the author's, `cron` for a schedule's."""


def _record(row: sqlite3.Row) -> QueuedRecord:
    return QueuedRecord(
        id=row["id"],
        thread_id=row["thread_id"],
        mode=row["mode"],
        text=row["text"],
        status=row["status"],
        run_id=row["run_id"],
        created_at=row["created_at"],
        delivered_at=row["delivered_at"],
        answered_at=row["answered_at"],
        lane=row["lane"],
    )


class QueueRepo(Repository):
    """Messages queued for busy threads, and each thread's default queue mode."""

    def enqueue(
        self,
        thread_id: str,
        mode: str,
        text: str,
        lane: str = "main",
        *,
        message_id: str | None = None,
    ) -> QueuedRecord:
        """Queue a message. With `message_id` (a result announced into the thread) it is
        queued once: a second call with the same id changes nothing and returns the first."""
        if message_id is not None and (known := self.get(message_id)) is not None:
            return known
        message_id = message_id or uuid.uuid4().hex
        now = time.time()
        self.conn.execute(
            "INSERT INTO queued_messages(id, thread_id, mode, text, created_at, lane)"
            " VALUES (?,?,?,?,?,?)",
            (message_id, thread_id, mode, text, now, lane),
        )
        return QueuedRecord(
            message_id, thread_id, mode, text, "queued", None, now, None, None, lane
        )

    def get(self, message_id: str) -> QueuedRecord | None:
        row = self.conn.execute(
            "SELECT * FROM queued_messages WHERE id = ?", (message_id,)
        ).fetchone()
        return _record(row) if row is not None else None

    def queued(self, thread_id: str) -> list[QueuedRecord]:
        """Still waiting for delivery, in the order they were sent."""
        rows = self.conn.execute(
            "SELECT * FROM queued_messages WHERE thread_id = ? AND status = 'queued' ORDER BY seq",
            (thread_id,),
        ).fetchall()
        return [_record(r) for r in rows]

    def count_queued(self, thread_id: str) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM queued_messages WHERE thread_id = ? AND status = 'queued'",
            (thread_id,),
        ).fetchone()
        return int(row[0])

    def open_messages(self, thread_id: str) -> list[QueuedRecord]:
        """Queued and delivered (not yet answered), oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM queued_messages WHERE thread_id = ?"
            " AND status IN ('queued', 'delivered') ORDER BY seq",
            (thread_id,),
        ).fetchall()
        return [_record(r) for r in rows]

    def threads_with_queued(self) -> list[str]:
        rows = self.conn.execute(
            "SELECT DISTINCT thread_id FROM queued_messages WHERE status = 'queued'"
        ).fetchall()
        return [r[0] for r in rows]

    def mark_delivered(self, message_ids: list[str], run_id: str) -> int:
        """Queued → delivered; returns how many rows moved (already delivered ones do not)."""
        now = time.time()
        moved = 0
        for message_id in message_ids:
            cur = self.conn.execute(
                "UPDATE queued_messages SET status = 'delivered', run_id = ?, delivered_at = ?"
                " WHERE id = ? AND status = 'queued'",
                (run_id, now, message_id),
            )
            moved += cur.rowcount
        return moved

    def redeliver(self, message_ids: list[str], run_id: str) -> None:
        """Delivered messages handed to another run of the same turn (a retry after a crash)."""
        for message_id in message_ids:
            self.conn.execute(
                "UPDATE queued_messages SET run_id = ? WHERE id = ? AND status = 'delivered'",
                (run_id, message_id),
            )

    def mark_answered(self, run_id: str) -> list[str]:
        """Every message delivered to `run_id` is answered now; returns their ids."""
        rows = self.conn.execute(
            "SELECT id FROM queued_messages WHERE run_id = ? AND status = 'delivered'", (run_id,)
        ).fetchall()
        self.conn.execute(
            "UPDATE queued_messages SET status = 'answered', answered_at = ?"
            " WHERE run_id = ? AND status = 'delivered'",
            (time.time(), run_id),
        )
        return [r[0] for r in rows]

    def edit(self, message_id: str, text: str) -> bool:
        cur = self.conn.execute(
            "UPDATE queued_messages SET text = ? WHERE id = ? AND status = 'queued'",
            (text, message_id),
        )
        return cur.rowcount == 1

    def withdraw(self, message_id: str) -> bool:
        cur = self.conn.execute(
            "UPDATE queued_messages SET status = 'withdrawn' WHERE id = ? AND status = 'queued'",
            (message_id,),
        )
        return cur.rowcount == 1

    def default_mode(self, thread_id: str) -> str | None:
        row = self.conn.execute(
            "SELECT mode FROM thread_queue_modes WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return str(row[0]) if row is not None else None

    def set_default_mode(self, thread_id: str, mode: str) -> None:
        self.conn.execute(
            "INSERT INTO thread_queue_modes(thread_id, mode) VALUES (?, ?)"
            " ON CONFLICT(thread_id) DO UPDATE SET mode = excluded.mode",
            (thread_id, mode),
        )
