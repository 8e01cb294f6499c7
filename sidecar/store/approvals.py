"""Approved tool definitions, for drift detection.

An approval records the hash and the full definition (name, description, input schema) of a tool
when the author allowed it, so a later change can be held and shown as a diff. Definitions are
what the server published; they hold no secrets of ours.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, cast

from sidecar.store.repository import Repository

APPROVAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_approvals (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    hash TEXT NOT NULL,
    definition TEXT NOT NULL,
    approved_at REAL NOT NULL,
    PRIMARY KEY (server, tool)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class ToolApproval:
    server: str
    tool: str
    hash: str
    definition: dict[str, Any]
    approved_at: float


class ApprovalRepo(Repository):
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
