"""Calls that may have run: a journal intent with no result, put to the author as a question.

A write is journaled before it runs (intent) and after (result). An intent without a result
means the sidecar stopped while the call was in flight: nobody knows whether its effect
happened. Such a call never runs again on its own. Each time it is put to the author it gets a
*new* question (a fresh interrupt id: an answered question stays answered), linked here to the
journal key; the author's decision is written to the journal:

- ``mark_done``: the journal gets a result saying the author confirmed it ran;
- ``skip``: the journal gets an error result saying it was skipped;
- ``run_again``: the journal row goes to status ``again``, which the tool node consumes once
  (back to ``intent``, then the call runs and its result is journaled as usual).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Literal, cast

from sidecar.store.repository import Repository

UNCERTAIN_SCHEMA = """
CREATE TABLE IF NOT EXISTS uncertain_calls (
    interrupt_id TEXT PRIMARY KEY,
    journal_key TEXT NOT NULL,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    decision TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS uncertain_by_key ON uncertain_calls(journal_key);
"""

Decision = Literal["mark_done", "run_again", "skip"]
AGAIN = "again"
"""Journal status of a call the author chose to run again (not yet re-run)."""


def journal_key(thread_id: str, call_id: str) -> str:
    """The journal's idempotency key of a call of a thread."""
    return f"{thread_id}:{call_id}"


class CallUncertainError(Exception):
    """A call of this turn may have run before the sidecar stopped and the author has not said
    what to do with it: the turn pauses until they do."""

    def __init__(self, key: str) -> None:
        super().__init__(f"call {key} may have run; waiting for the author's decision")
        self.key = key


@dataclass(frozen=True, slots=True)
class OpenIntent:
    """A journaled write with no result: what the journal knows about it."""

    key: str
    thread_id: str
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    status: str
    created_at: float


@dataclass(frozen=True, slots=True)
class UncertainQuestion:
    interrupt_id: str
    journal_key: str
    thread_id: str
    call_id: str
    decision: str | None


class UncertainRepo(Repository):
    def open_intents(self, thread_id: str | None = None) -> list[OpenIntent]:
        """Journaled calls without a result (of one thread, or of every thread), oldest first."""
        sql = "SELECT * FROM tool_journal WHERE result IS NULL"
        args: tuple[str, ...] = ()
        if thread_id is not None:
            sql += " AND thread_id = ?"
            args = (thread_id,)
        rows = self.conn.execute(sql + " ORDER BY created_at, key", args).fetchall()
        return [_intent(r) for r in rows]

    def open_intent(self, key: str) -> OpenIntent | None:
        row = self.conn.execute(
            "SELECT * FROM tool_journal WHERE key = ? AND result IS NULL", (key,)
        ).fetchone()
        return _intent(row) if row is not None else None

    def link_uncertain(self, interrupt_id: str, intent: OpenIntent) -> None:
        """Record that question `interrupt_id` asks about the call `intent`."""
        self.conn.execute(
            "INSERT INTO uncertain_calls(interrupt_id, journal_key, thread_id, call_id,"
            " created_at) VALUES (?,?,?,?,?)",
            (interrupt_id, intent.key, intent.thread_id, intent.call_id, time.time()),
        )

    def uncertain_question(self, interrupt_id: str) -> UncertainQuestion | None:
        row = self.conn.execute(
            "SELECT * FROM uncertain_calls WHERE interrupt_id = ?", (interrupt_id,)
        ).fetchone()
        if row is None:
            return None
        return UncertainQuestion(
            row["interrupt_id"],
            row["journal_key"],
            row["thread_id"],
            row["call_id"],
            row["decision"],
        )

    def pending_uncertain_question(self, key: str) -> str | None:
        """The id of the unanswered question about `key`, if one is pending."""
        row = self.conn.execute(
            "SELECT u.interrupt_id FROM uncertain_calls u JOIN interrupts i"
            " ON i.id = u.interrupt_id WHERE u.journal_key = ? AND i.status = 'pending'",
            (key,),
        ).fetchone()
        return str(row[0]) if row is not None else None

    def decide_uncertain(
        self, interrupt_id: str, decision: Decision, result: dict[str, Any] | None
    ) -> None:
        """Write the author's decision: a result for `mark_done`/`skip`, status `again` for
        `run_again`. The call's journal row must still be open."""
        row = self.conn.execute(
            "SELECT journal_key FROM uncertain_calls WHERE interrupt_id = ?", (interrupt_id,)
        ).fetchone()
        key = str(row[0])
        self.conn.execute(
            "UPDATE uncertain_calls SET decision = ? WHERE interrupt_id = ?",
            (decision, interrupt_id),
        )
        if decision == "run_again":
            self.conn.execute(
                "UPDATE tool_journal SET status = ? WHERE key = ? AND result IS NULL",
                (AGAIN, key),
            )
        else:
            self.close_intent(key, result or {})

    def rearm_intent(self, key: str) -> None:
        """The call chosen to run again is about to run: an intent again until its result."""
        self.conn.execute(
            "UPDATE tool_journal SET status = 'intent', created_at = ? WHERE key = ?",
            (time.time(), key),
        )

    def close_intent(self, key: str, result: dict[str, Any]) -> None:
        """Give an open intent its final result (a decision, or an uncertain abandonment)."""
        self.conn.execute(
            "UPDATE tool_journal SET status = 'done', result = ?, finished_at = ?"
            " WHERE key = ? AND result IS NULL",
            (json.dumps(result), time.time(), key),
        )


def _intent(row: sqlite3.Row) -> OpenIntent:
    thread_id = str(row["thread_id"])
    key = str(row["key"])
    prefix = f"{thread_id}:"
    call_id = key[len(prefix) :] if key.startswith(prefix) else key
    return OpenIntent(
        key=key,
        thread_id=thread_id,
        call_id=call_id,
        server=row["server"],
        tool=row["tool"],
        arguments=cast(dict[str, Any], json.loads(row["arguments"])),
        status=row["status"],
        created_at=row["created_at"],
    )
