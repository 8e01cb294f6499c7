"""Grants minted by an approved plan, scoped to its tasks (DESIGN.md §15).

Approving a plan is the author's yes to what its tasks will do: each task that runs a writing
strong agent gets a grant for that dispatch (`server`/`tool`), and, when the author named
paths while approving, for accepting its changes inside those paths. A grant counts only
while its plan is running: it ends with the plan (completed, failed, aborted, superseded), and
ended grants are deleted the next time grants are listed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sidecar.store.repository import Repository

PLAN_GRANT_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_grants (
    plan_id TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    task_id TEXT NOT NULL,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    paths TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (plan_id, task_id, server, tool)
) WITHOUT ROWID;
"""
_LIVE = "running"


@dataclass(frozen=True, slots=True)
class PlanGrant:
    """One task's grant: it may run `server__tool`, and its changes inside `paths` (relative
    to the workspace; empty: none) are accepted without asking."""

    plan_id: str
    task_id: str
    server: str
    tool: str
    paths: tuple[str, ...]
    created_at: float


@dataclass(frozen=True, slots=True)
class PlanGrantView:
    """A live plan grant with its plan's goal and thread, for the grants panel."""

    grant: PlanGrant
    thread_id: str
    thread_title: str
    goal: str


class PlanGrantRepo(Repository):
    def mint_plan_grants(self, plan_id: str, grants: Sequence[PlanGrant]) -> None:
        """Replace the plan's grants by `grants` (an approved new version re-mints them)."""
        self.conn.execute("DELETE FROM plan_grants WHERE plan_id = ?", (plan_id,))
        self.conn.executemany(
            "INSERT INTO plan_grants(plan_id, task_id, server, tool, paths, created_at)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(plan_id, task_id, server, tool)"
            " DO UPDATE SET paths = excluded.paths, created_at = excluded.created_at",
            [
                (plan_id, g.task_id, g.server, g.tool, json.dumps(list(g.paths)), time.time())
                for g in grants
            ],
        )

    def plan_grant(self, plan_id: str, task_id: str, server: str, tool: str) -> PlanGrant | None:
        """The task's grant for this tool, while its plan runs; None otherwise."""
        row = self.conn.execute(
            "SELECT g.* FROM plan_grants g JOIN plans p ON p.id = g.plan_id"
            " WHERE g.plan_id = ? AND g.task_id = ? AND g.server = ? AND g.tool = ?"
            " AND p.status = ?",
            (plan_id, task_id, server, tool, _LIVE),
        ).fetchone()
        return _grant(row) if row is not None else None

    def live_plan_grants(self) -> list[PlanGrantView]:
        """Every grant of a running plan, newest first; grants of ended plans are deleted."""
        self.conn.execute(
            "DELETE FROM plan_grants WHERE plan_id IN (SELECT id FROM plans WHERE status != ?)",
            (_LIVE,),
        )
        rows = self.conn.execute(
            "SELECT g.*, p.thread_id AS thread_id, p.goal AS goal, t.title AS title"
            " FROM plan_grants g JOIN plans p ON p.id = g.plan_id"
            " JOIN threads t ON t.id = p.thread_id ORDER BY g.created_at DESC, g.task_id"
        ).fetchall()
        return [PlanGrantView(_grant(r), r["thread_id"], r["title"], r["goal"]) for r in rows]

    def revoke_plan_grant(self, plan_id: str, task_id: str, server: str, tool: str) -> bool:
        """Remove one plan grant; False if there was none."""
        cur = self.conn.execute(
            "DELETE FROM plan_grants WHERE plan_id = ? AND task_id = ? AND server = ? AND tool = ?",
            (plan_id, task_id, server, tool),
        )
        return cur.rowcount > 0


def _grant(row: sqlite3.Row) -> PlanGrant:
    return PlanGrant(
        plan_id=row["plan_id"],
        task_id=row["task_id"],
        server=row["server"],
        tool=row["tool"],
        paths=tuple(cast(list[str], json.loads(row["paths"]))),
        created_at=row["created_at"],
    )
