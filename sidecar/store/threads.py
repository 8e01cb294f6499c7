"""Threads: the persistence key of a conversation, and sub-threads of subagents under it."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Sequence

from sidecar.store.records import ThreadRecord
from sidecar.store.repository import Repository

THREAD_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'idle',
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    parent_id TEXT REFERENCES threads(id) ON DELETE CASCADE,
    autonomous INTEGER NOT NULL DEFAULT 0
);
"""

THREAD_INDEXES = "CREATE INDEX IF NOT EXISTS threads_by_parent ON threads(parent_id);"
"""Made after the migrations: `parent_id` is a column version 2 added."""


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


class ThreadRepo(Repository):
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
