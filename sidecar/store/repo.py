"""Typed access to the tables. All writes go through the sidecar's one connection."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from sidecar.store.approvals import ApprovalRepo
from sidecar.store.db import Database
from sidecar.store.history import HistoryRepo, message_record
from sidecar.store.plan_grants import PlanGrantRepo
from sidecar.store.plans import PlanRepo
from sidecar.store.records import MessageRecord, StoredToolCall, ThreadRecord
from sidecar.store.runs import RunRepo
from sidecar.store.uncertain import UncertainRepo


class ThreadNotFoundError(LookupError):
    """No thread has this id."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"thread {thread_id!r} not found")
        self.thread_id = thread_id


def _thread(row: sqlite3.Row) -> ThreadRecord:
    return ThreadRecord(
        id=row["id"],
        title=row["title"],
        status=row["status"],
        last_error=row["last_error"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        parent_id=row["parent_id"],
    )


class Store(RunRepo, ApprovalRepo, PlanRepo, HistoryRepo, UncertainRepo, PlanGrantRepo):
    """Threads and the conversation of record, plus runs, interrupts, grants and the journal."""

    def __init__(self, db: Database) -> None:
        super().__init__(db.conn)
        self.db = db

    @contextmanager
    def transaction(self) -> Generator[None]:
        """One atomic write; nested use is not supported."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def create_thread(
        self, title: str, *, parent_id: str | None = None, thread_id: str | None = None
    ) -> ThreadRecord:
        """A thread; with `parent_id`, a subagent's sub-thread (hidden from the thread list,
        deleted with its parent)."""
        now = time.time()
        thread_id = thread_id or uuid.uuid4().hex
        self.conn.execute(
            "INSERT INTO threads(id, title, status, created_at, updated_at, parent_id)"
            " VALUES (?,?,?,?,?,?)",
            (thread_id, title, "idle", now, now, parent_id),
        )
        return ThreadRecord(thread_id, title, "idle", None, now, now, parent_id)

    def has_thread(self, thread_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone()
        return row is not None

    def sub_threads(self, thread_id: str) -> list[str]:
        """Every sub-thread under `thread_id`, at any depth."""
        rows = self.conn.execute(
            "WITH RECURSIVE sub(id) AS (SELECT id FROM threads WHERE parent_id = ?"
            " UNION ALL SELECT t.id FROM threads t JOIN sub ON t.parent_id = sub.id)"
            " SELECT id FROM sub",
            (thread_id,),
        ).fetchall()
        return [r[0] for r in rows]

    def is_autonomous(self, thread_id: str) -> bool:
        row = self.conn.execute(
            "SELECT autonomous FROM threads WHERE id = ?", (thread_id,)
        ).fetchone()
        return bool(row[0]) if row is not None else False

    def set_autonomous(self, thread_id: str, autonomous: bool) -> None:
        self._update_thread(thread_id, "autonomous = ?", (int(autonomous),))

    def get_thread(self, thread_id: str) -> ThreadRecord:
        """Raises:
        ThreadNotFoundError: no such thread."""
        row = self.conn.execute("SELECT * FROM threads WHERE id = ?", (thread_id,)).fetchone()
        if row is None:
            raise ThreadNotFoundError(thread_id)
        return _thread(row)

    def list_threads(self) -> list[ThreadRecord]:
        rows = self.conn.execute(
            "SELECT * FROM threads WHERE parent_id IS NULL ORDER BY updated_at DESC, id"
        ).fetchall()
        return [_thread(r) for r in rows]

    def rename_thread(self, thread_id: str, title: str) -> ThreadRecord:
        self._update_thread(thread_id, "title = ?", (title,))
        return self.get_thread(thread_id)

    def set_thread_status(self, thread_id: str, status: str, error: str | None = None) -> None:
        self._update_thread(thread_id, "status = ?, last_error = ?", (status, error))

    def delete_thread(self, thread_id: str) -> None:
        cur = self.conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))
        if cur.rowcount == 0:
            raise ThreadNotFoundError(thread_id)

    def _update_thread(self, thread_id: str, assignments: str, values: Sequence[object]) -> None:
        cur = self.conn.execute(
            f"UPDATE threads SET {assignments}, updated_at = ? WHERE id = ?",
            (*values, time.time(), thread_id),
        )
        if cur.rowcount == 0:
            raise ThreadNotFoundError(thread_id)

    def add_message(
        self,
        thread_id: str,
        role: str,
        content: str,
        *,
        message_id: str | None = None,
        tool_calls: Sequence[StoredToolCall] = (),
        tool_call_id: str | None = None,
        is_error: bool = False,
    ) -> MessageRecord:
        """Append to the conversation. A given `message_id` is written at most once, so a node
        that re-runs after a crash or an interrupt does not duplicate its message."""
        record = MessageRecord(
            id=message_id or uuid.uuid4().hex,
            thread_id=thread_id,
            role=role,
            content=content,
            created_at=time.time(),
            tool_calls=tuple(tool_calls),
            tool_call_id=tool_call_id,
            is_error=is_error,
        )
        calls = json.dumps([_call_dict(c) for c in tool_calls]) if tool_calls else None
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO messages(id, thread_id, role, content, tool_calls, tool_call_id,"
            " is_error, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (
                record.id,
                thread_id,
                role,
                content,
                calls,
                tool_call_id,
                int(is_error),
                record.created_at,
            ),
        )
        if cur.rowcount == 0:
            row = self.conn.execute("SELECT * FROM messages WHERE id = ?", (record.id,)).fetchone()
            return message_record(row)
        self.conn.execute(
            "UPDATE threads SET updated_at = ? WHERE id = ?", (time.time(), thread_id)
        )
        return record

    def recent_messages(self, thread_id: str, limit: int) -> list[MessageRecord]:
        """The last `limit` messages in order (an index range scan: cost does not grow with the
        thread)."""
        rows = self.conn.execute(
            "SELECT * FROM (SELECT * FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT ?)"
            " ORDER BY seq",
            (thread_id, limit),
        ).fetchall()
        return [message_record(r) for r in rows]

    def has_message(self, message_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM messages WHERE id = ?", (message_id,)).fetchone()
        return row is not None

    def unanswered_tool_calls(self, thread_id: str) -> list[StoredToolCall]:
        """Tool calls of the thread's latest turn that have no result message yet.

        Every new author message closes the turn before it, so only the latest turn can hold
        open calls; scanning from its first message keeps this flat however long the thread.
        """
        row = self.conn.execute(
            "SELECT MAX(seq) FROM messages WHERE thread_id = ? AND role = 'user'", (thread_id,)
        ).fetchone()
        since = row[0] if row and row[0] is not None else 0
        rows = self.conn.execute(
            "SELECT role, tool_calls, tool_call_id FROM messages"
            " WHERE thread_id = ? AND seq >= ? ORDER BY seq",
            (thread_id, since),
        ).fetchall()
        answered = {r["tool_call_id"] for r in rows if r["role"] == "tool"}
        calls = [
            StoredToolCall(**c)
            for r in rows
            if r["tool_calls"]
            for c in cast(list[dict[str, Any]], json.loads(r["tool_calls"]))
        ]
        return [c for c in calls if c.id not in answered]


def _call_dict(call: StoredToolCall) -> dict[str, Any]:
    return {"id": call.id, "server": call.server, "tool": call.tool, "arguments": call.arguments}
