"""The durable outbox of subagent envelopes: written once, consumed once (acked)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.store.repository import Repository

OUTBOX_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    plan_id TEXT,
    task_id TEXT,
    sender TEXT NOT NULL,
    receiver TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    artifacts TEXT NOT NULL,
    reply_to TEXT,
    created_at REAL NOT NULL,
    acked_at REAL
);
CREATE INDEX IF NOT EXISTS outbox_unacked ON outbox(thread_id, acked_at);
CREATE INDEX IF NOT EXISTS outbox_receiver ON outbox(receiver, acked_at);
CREATE INDEX IF NOT EXISTS outbox_task ON outbox(plan_id, task_id);
"""


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    id: str
    thread_id: str
    plan_id: str | None
    task_id: str | None
    sender: str
    receiver: str
    kind: str
    payload: dict[str, Any]
    artifacts: tuple[str, ...]
    reply_to: str | None
    created_at: float
    acked_at: float | None


def _outbox(row: sqlite3.Row) -> OutboxRecord:
    data = dict(row)
    data["payload"] = json.loads(data["payload"])
    data["artifacts"] = tuple(json.loads(data["artifacts"]))
    return OutboxRecord(**data)


class OutboxRepo(Repository):
    def put_envelope(
        self,
        envelope_id: str,
        thread_id: str,
        *,
        sender: str,
        receiver: str,
        kind: str,
        payload: dict[str, Any],
        plan_id: str | None = None,
        task_id: str | None = None,
        artifacts: Sequence[str] = (),
        reply_to: str | None = None,
        created_at: float | None = None,
    ) -> None:
        """Write an envelope to the outbox (once: the same id again is ignored)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO outbox(id, thread_id, plan_id, task_id, sender, receiver,"
            " kind, payload, artifacts, reply_to, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                envelope_id,
                thread_id,
                plan_id,
                task_id,
                sender,
                receiver,
                kind,
                json.dumps(payload),
                json.dumps(list(artifacts)),
                reply_to,
                created_at if created_at is not None else time.time(),
            ),
        )

    def unacked_envelopes(self, thread_id: str, plan_id: str | None = None) -> list[OutboxRecord]:
        rows = self.conn.execute(
            "SELECT * FROM outbox WHERE thread_id = ? AND acked_at IS NULL"
            " AND (? IS NULL OR plan_id = ?) ORDER BY created_at, id",
            (thread_id, plan_id, plan_id),
        ).fetchall()
        return [_outbox(r) for r in rows]

    def has_envelope(self, envelope_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM outbox WHERE id = ?", (envelope_id,)).fetchone()
        return row is not None

    def envelopes_of_task(self, plan_id: str, task_id: str) -> list[OutboxRecord]:
        """Every envelope a task sent or was sent, oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM outbox WHERE plan_id = ? AND task_id = ? ORDER BY created_at, id",
            (plan_id, task_id),
        ).fetchall()
        return [_outbox(r) for r in rows]

    def envelopes_for(self, receiver: str) -> list[OutboxRecord]:
        """The envelopes addressed to `receiver` that it has not taken yet, oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM outbox WHERE receiver = ? AND acked_at IS NULL ORDER BY created_at, id",
            (receiver,),
        ).fetchall()
        return [_outbox(r) for r in rows]

    def envelopes(self, thread_id: str) -> list[OutboxRecord]:
        rows = self.conn.execute(
            "SELECT * FROM outbox WHERE thread_id = ? ORDER BY created_at, id", (thread_id,)
        ).fetchall()
        return [_outbox(r) for r in rows]

    def ack_envelope(self, envelope_id: str) -> bool:
        """Mark consumed; False if it already was (the consumer must not act twice)."""
        cur = self.conn.execute(
            "UPDATE outbox SET acked_at = ? WHERE id = ? AND acked_at IS NULL",
            (time.time(), envelope_id),
        )
        return cur.rowcount == 1
