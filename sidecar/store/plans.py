"""Plans and their tasks.

Task rows carry a `version` column: every change is a compare-and-set on it
(`update_task(..., expected_version=...)`), so of two writers racing on one task (the runner
finishing it, the author cancelling it) exactly one wins and the other sees it lost.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, cast

from sidecar.store.repository import Repository

PLAN_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    goal TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    call_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS plans_by_thread ON plans(thread_id, created_at);
CREATE TABLE IF NOT EXISTS tasks (
    plan_id TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    title TEXT NOT NULL,
    objective TEXT NOT NULL,
    profile TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    success_criteria TEXT NOT NULL,
    optional INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0,
    activity TEXT,
    stalled INTEGER NOT NULL DEFAULT 0,
    started_at REAL,
    finished_at REAL,
    last_event_at REAL,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    sub_thread_id TEXT,
    session_ref TEXT,
    summary TEXT,
    error TEXT,
    PRIMARY KEY (plan_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replaced_tasks (
    plan_id TEXT NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    plan_version INTEGER NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    replaced_at REAL NOT NULL,
    PRIMARY KEY (plan_id, plan_version, id)
) WITHOUT ROWID;
"""

FINAL_TASK_STATES = frozenset({"succeeded", "failed", "cancelled", "skipped"})


@dataclass(frozen=True, slots=True)
class PlanRecord:
    id: str
    thread_id: str
    goal: str
    version: int
    status: str
    call_id: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class TaskRecord:
    plan_id: str
    id: str
    seq: int
    title: str
    objective: str
    profile: str
    depends_on: tuple[str, ...]
    success_criteria: str
    optional: bool
    status: str
    attempt: int
    version: int
    activity: str | None
    stalled: bool
    started_at: float | None
    finished_at: float | None
    last_event_at: float | None
    tokens_in: int
    tokens_out: int
    cost: float
    sub_thread_id: str | None
    session_ref: str | None
    summary: str | None
    error: str | None

    @property
    def final(self) -> bool:
        return self.status in FINAL_TASK_STATES


_TASK_FIELDS = frozenset(f.name for f in fields(TaskRecord)) - {"plan_id", "id", "version"}


def _task(row: sqlite3.Row) -> TaskRecord:
    data = dict(row)
    data["depends_on"] = tuple(json.loads(data["depends_on"]))
    data["stalled"] = bool(data["stalled"])
    data["optional"] = bool(data["optional"])
    return TaskRecord(**data)


class PlanRepo(Repository):
    def create_plan(self, plan_id: str, thread_id: str, goal: str, call_id: str | None) -> None:
        now = time.time()
        self.conn.execute(
            "INSERT INTO plans(id, thread_id, goal, version, status, call_id, created_at,"
            " updated_at) VALUES (?,?,?,?,?,?,?,?)",
            (plan_id, thread_id, goal, 0, "awaiting_approval", call_id, now, now),
        )

    def get_plan(self, plan_id: str) -> PlanRecord | None:
        row = self.conn.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
        return PlanRecord(**dict(row)) if row is not None else None

    def plans(self, thread_id: str) -> list[PlanRecord]:
        rows = self.conn.execute(
            "SELECT * FROM plans WHERE thread_id = ? ORDER BY created_at, id", (thread_id,)
        ).fetchall()
        return [PlanRecord(**dict(r)) for r in rows]

    def recent_plans(self, status: str | None, limit: int) -> list[PlanRecord]:
        """Plans of the author's threads (not of subagents' sub-threads), newest first."""
        rows = self.conn.execute(
            "SELECT p.* FROM plans p JOIN threads t ON t.id = p.thread_id"
            " WHERE t.parent_id IS NULL AND (? IS NULL OR p.status = ?)"
            " ORDER BY p.created_at DESC, p.id DESC LIMIT ?",
            (status, status, limit),
        ).fetchall()
        return [PlanRecord(**dict(r)) for r in rows]

    def plans_in_status(self, status: str) -> list[PlanRecord]:
        """Every plan in `status`, across threads, oldest first."""
        rows = self.conn.execute(
            "SELECT * FROM plans WHERE status = ? ORDER BY created_at, id", (status,)
        ).fetchall()
        return [PlanRecord(**dict(r)) for r in rows]

    def set_plan_status(self, plan_id: str, status: str, call_id: str | None = None) -> None:
        self.conn.execute(
            "UPDATE plans SET status = ?, call_id = COALESCE(?, call_id), updated_at = ?"
            " WHERE id = ?",
            (status, call_id, time.time(), plan_id),
        )

    def replace_open_tasks(self, plan_id: str, goal: str, specs: Sequence[dict[str, Any]]) -> int:
        """A new version of the plan: tasks not yet succeeded are replaced by `specs` (in
        order); succeeded tasks stay as they are. Returns the new version."""
        with_tx = not self.conn.in_transaction
        if with_tx:
            self.conn.execute("BEGIN IMMEDIATE")
        try:
            self._keep_history(plan_id)
            self.conn.execute(
                "DELETE FROM tasks WHERE plan_id = ? AND status != 'succeeded'", (plan_id,)
            )
            for seq, spec in enumerate(specs):
                self.conn.execute(
                    "INSERT OR IGNORE INTO tasks(plan_id, id, seq, title, objective, profile,"
                    " depends_on, success_criteria, optional, status)"
                    " VALUES (?,?,?,?,?,?,?,?,?,'pending')",
                    (
                        plan_id,
                        spec["id"],
                        seq,
                        spec["title"],
                        spec["objective"],
                        spec["profile"],
                        json.dumps(list(spec["depends_on"])),
                        spec["success_criteria"],
                        int(bool(spec.get("optional", False))),
                    ),
                )
            self.conn.execute(
                "UPDATE plans SET version = version + 1, goal = ?, updated_at = ? WHERE id = ?",
                (goal, time.time(), plan_id),
            )
            version = int(
                self.conn.execute("SELECT version FROM plans WHERE id = ?", (plan_id,)).fetchone()[
                    0
                ]
            )
            if with_tx:
                self.conn.execute("COMMIT")
        except BaseException:
            if with_tx and self.conn.in_transaction:  # SQLITE_FULL may have rolled it back
                self.conn.execute("ROLLBACK")
            raise
        return version

    def _keep_history(self, plan_id: str) -> None:
        """The tasks a new version replaces that ran or ended (failed, skipped, cancelled)
        stay on record under the version they belonged to."""
        row = self.conn.execute("SELECT version FROM plans WHERE id = ?", (plan_id,)).fetchone()
        if row is None:
            return
        now = time.time()
        for task in self.tasks(plan_id):
            if task.status == "succeeded" or (task.status == "pending" and task.attempt == 0):
                continue
            body = {f.name: getattr(task, f.name) for f in fields(task)}
            self.conn.execute(
                "INSERT OR IGNORE INTO replaced_tasks(plan_id, plan_version, id, body,"
                " replaced_at) VALUES (?,?,?,?,?)",
                (plan_id, int(row[0]), task.id, json.dumps(body), now),
            )

    def replaced_tasks(self, plan_id: str) -> list[tuple[int, TaskRecord]]:
        """Tasks earlier versions of the plan had and a replan replaced, with the version
        each belonged to, oldest first."""
        rows = self.conn.execute(
            "SELECT plan_version, body FROM replaced_tasks WHERE plan_id = ?"
            " ORDER BY plan_version, replaced_at, id",
            (plan_id,),
        ).fetchall()
        found: list[tuple[int, TaskRecord]] = []
        for version, body in rows:
            data = json.loads(body)
            data["depends_on"] = tuple(data["depends_on"])
            found.append((int(version), TaskRecord(**data)))
        return found

    def finished_usage(self, profile: str, limit: int) -> list[tuple[int, float]]:
        """(tokens, cost) of the profile's newest succeeded tasks, newest first: the evidence
        for what its next task will use."""
        rows = self.conn.execute(
            "SELECT tokens_in + tokens_out, cost FROM tasks"
            " WHERE profile = ? AND status = 'succeeded' AND tokens_in + tokens_out > 0"
            " ORDER BY finished_at DESC LIMIT ?",
            (profile, limit),
        ).fetchall()
        return [(int(tokens), float(cost)) for tokens, cost in rows]

    def tasks(self, plan_id: str) -> list[TaskRecord]:
        rows = self.conn.execute(
            "SELECT * FROM tasks WHERE plan_id = ? ORDER BY seq, id", (plan_id,)
        ).fetchall()
        return [_task(r) for r in rows]

    def get_task(self, plan_id: str, task_id: str) -> TaskRecord | None:
        row = self.conn.execute(
            "SELECT * FROM tasks WHERE plan_id = ? AND id = ?", (plan_id, task_id)
        ).fetchone()
        return _task(row) if row is not None else None

    def update_task(
        self, plan_id: str, task_id: str, expected_version: int, **changes: object
    ) -> TaskRecord | None:
        """Compare-and-set: apply `changes` only if the row is still at `expected_version`.
        Returns the new row, or None when another writer changed it first."""
        if not self.update_task_raw(plan_id, task_id, expected_version, dict(changes)):
            return None
        return self.get_task(plan_id, task_id)

    def update_task_from(self, current: TaskRecord, **changes: Any) -> TaskRecord | None:
        """`update_task` against a row the caller holds: no re-read on success."""
        if not self.update_task_raw(current.plan_id, current.id, current.version, changes):
            return None
        if "depends_on" in changes:
            return self.get_task(current.plan_id, current.id)
        return replace(current, **changes, version=current.version + 1)

    def update_task_raw(
        self, plan_id: str, task_id: str, expected_version: int, changes: dict[str, Any]
    ) -> bool:
        unknown = set(changes) - _TASK_FIELDS
        if unknown:
            raise ValueError(f"not task fields: {sorted(unknown)}")
        values = [
            json.dumps(list(cast(Sequence[str], v))) if k == "depends_on" else v
            for k, v in changes.items()
        ]
        assignments = "".join(f"{k} = ?, " for k in changes)
        cur = self.conn.execute(
            f"UPDATE tasks SET {assignments}version = version + 1"
            " WHERE plan_id = ? AND id = ? AND version = ?",
            (*values, plan_id, task_id, expected_version),
        )
        return cur.rowcount == 1
