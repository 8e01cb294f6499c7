"""Runs of a thread and the events each run emitted (replayed to a window that reconnects)."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass

from sidecar.store.records import RunRecord
from sidecar.store.repository import Repository

RUN_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    started_at REAL NOT NULL,
    ended_at REAL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs(thread_id, started_at);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class StoredMemoryEvent:
    """A `memory` or `context` run event as stored (`type`, `body` its JSON), and the message
    its chip follows."""

    run_id: str
    seq: int
    type: str
    body: str
    after_message: str | None


_ROW_MESSAGE = (
    "(json_extract(body, '$.message.role') = 'user' OR (json_extract(body, '$.message.role')"
    " = 'assistant' AND json_extract(body, '$.message.content') != ''))"
)
"""A message event whose message shows as a row of its own in the transcript (a tool call
shows as its call, a tool result in its call's row)."""


class RunRepo(Repository):
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

    def run(self, run_id: str) -> RunRecord | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return RunRecord(**dict(row)) if row is not None else None

    def runs_in_status(self, status: str) -> list[RunRecord]:
        rows = self.conn.execute("SELECT * FROM runs WHERE status = ?", (status,)).fetchall()
        return [RunRecord(**dict(r)) for r in rows]

    def last_run_id(self, thread_id: str) -> str | None:
        """The id of the thread's newest run (by start)."""
        row = self.conn.execute(
            "SELECT id FROM runs WHERE thread_id = ? ORDER BY started_at DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        return str(row[0]) if row is not None else None

    def add_run_event(self, run_id: str, seq: int, event_type: str, body: str) -> None:
        self.conn.execute(
            "INSERT INTO run_events(run_id, seq, type, body) VALUES (?,?,?,?)",
            (run_id, seq, event_type, body),
        )

    def task_events(
        self, thread_id: str, plan_id: str, task_id: str, limit: int
    ) -> tuple[list[str], bool]:
        """The newest `limit` stored events of one task of the thread's plans (their JSON),
        oldest first, and whether older ones were left out."""
        rows = self.conn.execute(
            "SELECT e.body FROM run_events e JOIN runs r ON r.id = e.run_id"
            " WHERE r.thread_id = ? AND e.type = 'subagent_event'"
            " AND json_extract(e.body, '$.task_id') = ? AND json_extract(e.body, '$.plan_id') = ?"
            " ORDER BY r.started_at DESC, e.seq DESC LIMIT ?",
            (thread_id, task_id, plan_id, limit + 1),
        ).fetchall()
        bodies = [r["body"] for r in rows]
        return list(reversed(bodies[:limit])), len(bodies) > limit

    def run_events(self, run_id: str) -> list[tuple[int, str, str]]:
        rows = self.conn.execute(
            "SELECT seq, type, body FROM run_events WHERE run_id = ? ORDER BY seq", (run_id,)
        ).fetchall()
        return [(r["seq"], r["type"], r["body"]) for r in rows]

    def memory_events(self, thread_id: str, limit: int) -> tuple[list[StoredMemoryEvent], bool]:
        """The thread's newest `limit` stored memory and context events, oldest first (runs by
        start, then by seq), and whether older ones were left out.

        Each names the message its chip follows: the last message of its run before it that
        shows as a row, else the author's message the run answers (the last one recorded
        before the run's first message, or before the run started if it recorded none).
        """
        rows = self.conn.execute(
            "SELECT e.run_id, e.seq, e.type, e.body FROM runs r JOIN run_events e"
            " ON e.run_id = r.id WHERE r.thread_id = ? AND e.type IN ('memory', 'context')"
            " ORDER BY r.started_at DESC, r.rowid DESC, e.seq DESC LIMIT ?",
            (thread_id, limit + 1),
        ).fetchall()
        has_older = len(rows) > limit
        rows = rows[:limit][::-1]
        run_ids = list(dict.fromkeys(str(r[0]) for r in rows))
        messages = self._row_messages(run_ids)
        fallback: dict[str, str | None] = {}
        events: list[StoredMemoryEvent] = []
        for run_id, seq, event_type, body in rows:
            before = [m for s, m in messages.get(run_id, ()) if s < seq]
            if before:
                anchor: str | None = before[-1]
            else:
                if run_id not in fallback:
                    fallback[run_id] = self._question_of_run(thread_id, run_id)
                anchor = fallback[run_id]
            events.append(StoredMemoryEvent(run_id, seq, event_type, body, anchor))
        return events, has_older

    def _row_messages(self, run_ids: list[str]) -> dict[str, list[tuple[int, str]]]:
        """Run id -> (seq, message id) of its message events that show as rows, by seq."""
        found: dict[str, list[tuple[int, str]]] = defaultdict(list)
        rows = self.conn.execute(
            "SELECT run_id, seq, json_extract(body, '$.message.id') FROM run_events"
            " WHERE run_id IN (SELECT value FROM json_each(?)) AND type = 'message'"
            f" AND {_ROW_MESSAGE} ORDER BY run_id, seq",
            (json.dumps(run_ids),),
        ).fetchall()
        for run_id, seq, message_id in rows:
            if message_id is not None:
                found[str(run_id)].append((int(seq), str(message_id)))
        return found

    def _question_of_run(self, thread_id: str, run_id: str) -> str | None:
        """The author's message a run answers: the last one before the first message the run
        recorded; for a run that recorded none, the last one written before it started."""
        first = self.conn.execute(
            "SELECT m.seq FROM run_events e JOIN messages m"
            " ON m.id = json_extract(e.body, '$.message.id')"
            " WHERE e.run_id = ? AND e.type = 'message' ORDER BY e.seq LIMIT 1",
            (run_id,),
        ).fetchone()
        if first is not None:
            row = self.conn.execute(
                "SELECT id FROM messages WHERE thread_id = ? AND role = 'user' AND seq < ?"
                " ORDER BY seq DESC LIMIT 1",
                (thread_id, first[0]),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT m.id FROM messages m, runs r WHERE r.id = ? AND m.thread_id = ?"
                " AND m.role = 'user' AND m.created_at <= r.started_at"
                " ORDER BY m.seq DESC LIMIT 1",
                (run_id, thread_id),
            ).fetchone()
        return None if row is None else str(row[0])
