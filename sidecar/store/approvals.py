"""Approved tool definitions (for drift detection) and standing grants across threads.

An approval records the hash and the full definition (name, description, input schema) of a tool
when the author allowed it, so a later change can be held and shown as a diff. Definitions are
what the server published; they hold no secrets of ours.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, cast


@dataclass(frozen=True, slots=True)
class ToolApproval:
    server: str
    tool: str
    hash: str
    definition: dict[str, Any]
    approved_at: float


@dataclass(frozen=True, slots=True)
class GrantView:
    """A standing grant with its thread's title, for the grants panel."""

    thread_id: str | None
    thread_title: str
    server: str
    tool: str
    created_at: float


class ApprovalRepo:
    """Mixed into `Store`: uses its single-writer connection."""

    conn: sqlite3.Connection

    def approve_tool(self, server: str, tool: str, hash_: str, definition: dict[str, Any]) -> None:
        """Record (or replace) the approved definition of a tool."""
        self.conn.execute(
            "INSERT INTO tool_approvals(server, tool, hash, definition, approved_at)"
            " VALUES (?,?,?,?,?) ON CONFLICT(server, tool) DO UPDATE SET hash = excluded.hash,"
            " definition = excluded.definition, approved_at = excluded.approved_at",
            (server, tool, hash_, json.dumps(definition), time.time()),
        )

    def tool_approval(self, server: str, tool: str) -> ToolApproval | None:
        row = self.conn.execute(
            "SELECT * FROM tool_approvals WHERE server = ? AND tool = ?", (server, tool)
        ).fetchone()
        if row is None:
            return None
        return ToolApproval(
            server=row["server"],
            tool=row["tool"],
            hash=row["hash"],
            definition=cast(dict[str, Any], json.loads(row["definition"])),
            approved_at=row["approved_at"],
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
