"""Grants: a tool allowed in one thread, or in every thread (a standing grant, "always
allow"), until revoked."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sidecar.store.records import GrantRecord
from sidecar.store.repository import Repository

GRANT_SCHEMA = """
CREATE TABLE IF NOT EXISTS grants (
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (thread_id, server, tool)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS standing_grants (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (server, tool)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class GrantView:
    """A standing grant with its thread's title, for the grants panel."""

    thread_id: str | None
    thread_title: str
    server: str
    tool: str
    created_at: float


class GrantRepo(Repository):
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

    def all_grants(self) -> list[GrantView]:
        """Every standing grant, newest first."""
        rows = self.conn.execute(
            "SELECT g.thread_id, t.title, g.server, g.tool, g.created_at FROM grants g"
            " JOIN threads t ON t.id = g.thread_id"
            " UNION ALL SELECT NULL, 'All threads', server, tool, created_at FROM standing_grants"
            " ORDER BY 5 DESC"
        ).fetchall()
        return [GrantView(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def revoke_grant(self, thread_id: str | None, server: str, tool: str) -> bool:
        """Remove a grant (`thread_id` None: the one for every thread); False if none."""
        if thread_id is None:
            cur = self.conn.execute(
                "DELETE FROM standing_grants WHERE server = ? AND tool = ?", (server, tool)
            )
        else:
            cur = self.conn.execute(
                "DELETE FROM grants WHERE thread_id = ? AND server = ? AND tool = ?",
                (thread_id, server, tool),
            )
        return cur.rowcount > 0
