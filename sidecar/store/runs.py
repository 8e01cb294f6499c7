"""Runs, their events, interrupts, grants and the tool journal."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any, cast

from sidecar.store.records import GrantRecord, InterruptRecord, JournalRecord, RunRecord


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


class RunRepo:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create_run(self, run_id: str, thread_id: str, kind: str) -> RunRecord:
        now = time.time()
        self.conn.execute(
            "INSERT INTO runs(id, thread_id, kind, status, started_at) VALUES (?,?,?,?,?)",
            (run_id, thread_id, kind, "running", now),
        )
        return RunRecord(run_id, thread_id, kind, "running", None, now, None)

    def end_run(self, run_id: str, status: str, error: str | None = None) -> None:
        self.conn.execute(
            "UPDATE runs SET status = ?, error = ?, ended_at = ? WHERE id = ?",
            (status, error, time.time(), run_id),
        )

    def runs_in_status(self, status: str) -> list[RunRecord]:
        rows = self.conn.execute("SELECT * FROM runs WHERE status = ?", (status,)).fetchall()
        return [RunRecord(**dict(r)) for r in rows]

    def add_run_event(self, run_id: str, seq: int, event_type: str, body: str) -> None:
        self.conn.execute(
            "INSERT INTO run_events(run_id, seq, type, body) VALUES (?,?,?,?)",
            (run_id, seq, event_type, body),
        )

    def run_events(self, run_id: str) -> list[tuple[int, str, str]]:
        rows = self.conn.execute(
            "SELECT seq, type, body FROM run_events WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        return [(r["seq"], r["type"], r["body"]) for r in rows]

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

    def answer_interrupt(self, interrupt_id: str, answer: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE interrupts SET status = 'answered', answer = ?, answered_at = ?"
            " WHERE id = ? AND status = 'pending'",
            (json.dumps(answer), time.time(), interrupt_id),
        )

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

    def add_grant(self, thread_id: str, server: str, tool: str) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO grants(thread_id, server, tool, created_at) VALUES (?,?,?,?)",
            (thread_id, server, tool, time.time()),
        )

    def grants(self, thread_id: str) -> list[GrantRecord]:
        rows = self.conn.execute(
            "SELECT * FROM grants WHERE thread_id = ? ORDER BY created_at", (thread_id,)
        ).fetchall()
        return [GrantRecord(**dict(r)) for r in rows]

    def has_grant(self, thread_id: str, server: str, tool: str) -> bool:
        """A grant for this thread, or one for every thread."""
        row = self.conn.execute(
            "SELECT 1 FROM grants WHERE thread_id = ? AND server = ? AND tool = ?"
            " UNION ALL SELECT 1 FROM standing_grants WHERE server = ? AND tool = ?",
            (thread_id, server, tool, server, tool),
        ).fetchone()
        return row is not None

    def add_standing_grant(self, server: str, tool: str) -> None:
        """Allow the tool in every thread ("always allow") until revoked."""
        self.conn.execute(
            "INSERT OR IGNORE INTO standing_grants(server, tool, created_at) VALUES (?,?,?)",
            (server, tool, time.time()),
        )

    def journal_intent(
        self, key: str, thread_id: str, server: str, tool: str, arguments: dict[str, Any]
    ) -> None:
        """Record that a call is about to run (before it runs)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO tool_journal(key, thread_id, server, tool, arguments, status,"
            " created_at) VALUES (?,?,?,?,?,'intent',?)",
            (key, thread_id, server, tool, json.dumps(arguments), time.time()),
        )

    def journal_result(self, key: str, result: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE tool_journal SET status = 'done', result = ?, finished_at = ? WHERE key = ?",
            (json.dumps(result), time.time(), key),
        )

    def journal_entry(self, key: str) -> JournalRecord | None:
        row = self.conn.execute("SELECT * FROM tool_journal WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return JournalRecord(
            key=row["key"],
            thread_id=row["thread_id"],
            server=row["server"],
            tool=row["tool"],
            arguments=cast(dict[str, Any], json.loads(row["arguments"])),
            status=row["status"],
            result=cast(dict[str, Any], json.loads(row["result"])) if row["result"] else None,
        )
