"""Interrupts: questions a turn put to the author, pending until answered or dropped."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any, cast

from sidecar.store.records import InterruptRecord
from sidecar.store.repository import Repository

INTERRUPT_SCHEMA = """
CREATE TABLE IF NOT EXISTS interrupts (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    run_id TEXT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    answer TEXT,
    created_at REAL NOT NULL,
    answered_at REAL
);
CREATE INDEX IF NOT EXISTS interrupts_pending ON interrupts(thread_id, status);
"""


def _interrupt(row: sqlite3.Row) -> InterruptRecord:
    return InterruptRecord(
        id=row["id"],
        thread_id=row["thread_id"],
        run_id=row["run_id"],
        kind=row["kind"],
        payload=cast(dict[str, Any], json.loads(row["payload"])),
        status=row["status"],
        created_at=row["created_at"],
        answer=cast(dict[str, Any], json.loads(row["answer"])) if row["answer"] else None,
    )


class InterruptRepo(Repository):
    def save_interrupt(
        self, interrupt_id: str, thread_id: str, run_id: str | None, kind: str, payload: object
    ) -> None:
        """Record a pending interrupt; re-recording the same id keeps the first row."""
        self.conn.execute(
            "INSERT OR IGNORE INTO interrupts(id, thread_id, run_id, kind, payload, created_at)"
            " VALUES (?,?,?,?,?,?)",
            (interrupt_id, thread_id, run_id, kind, json.dumps(payload), time.time()),
        )

    def raise_interrupt(
        self, interrupt_id: str, thread_id: str, run_id: str, kind: str, payload: object
    ) -> None:
        """Record a graph interrupt as pending. The graph may raise an id again that was
        answered before (a node re-run after its answer): that is a new question, pending again
        until answered, never a question that looks answered."""
        self.conn.execute(
            "INSERT INTO interrupts(id, thread_id, run_id, kind, payload, created_at)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET status = 'pending',"
            " run_id = excluded.run_id, kind = excluded.kind, payload = excluded.payload,"
            " answer = NULL, answered_at = NULL",
            (interrupt_id, thread_id, run_id, kind, json.dumps(payload), time.time()),
        )

    def pending_interrupts(self, thread_id: str) -> list[InterruptRecord]:
        rows = self.conn.execute(
            "SELECT * FROM interrupts WHERE thread_id = ? AND status = 'pending'"
            " ORDER BY created_at, id",
            (thread_id,),
        ).fetchall()
        return [_interrupt(r) for r in rows]

    def answer_interrupt(self, interrupt_id: str, answer: dict[str, Any]) -> bool:
        """Record the answer of a pending interrupt (compare-and-set: False, and nothing
        changes, when it is no longer pending: another answer came first, or it was dropped)."""
        cur = self.conn.execute(
            "UPDATE interrupts SET status = 'answered', answer = ?, answered_at = ?"
            " WHERE id = ? AND status = 'pending'",
            (json.dumps(answer), time.time(), interrupt_id),
        )
        return cur.rowcount == 1

    def drop_interrupt(self, interrupt_id: str) -> None:
        self.conn.execute(
            "UPDATE interrupts SET status = 'dropped' WHERE id = ? AND status = 'pending'",
            (interrupt_id,),
        )

    def drop_pending_interrupts(self, thread_id: str) -> None:
        self.conn.execute(
            "UPDATE interrupts SET status = 'dropped' WHERE thread_id = ? AND status = 'pending'",
            (thread_id,),
        )
