"""A plan's token budget: its limit, whether the 80% warning was given, and what was spent.

Spent is the sum of the plan's tasks' recorded tokens (every finished attempt adds its own);
a running attempt's tokens are added by the caller that knows them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

BUDGET_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_budgets (
    plan_id TEXT PRIMARY KEY REFERENCES plans(id) ON DELETE CASCADE,
    budget_tokens INTEGER NOT NULL,
    warned INTEGER NOT NULL DEFAULT 0
);
"""


@dataclass(frozen=True, slots=True)
class PlanBudget:
    plan_id: str
    budget_tokens: int
    warned: bool
    spent_tokens: int

    @property
    def remaining_tokens(self) -> int:
        return max(0, self.budget_tokens - self.spent_tokens)


def set_plan_budget(conn: sqlite3.Connection, plan_id: str, budget_tokens: int) -> None:
    """Set (or raise) the plan's budget; the 80% warning is given again for the new limit."""
    conn.execute(
        "INSERT INTO plan_budgets(plan_id, budget_tokens, warned) VALUES (?, ?, 0)"
        " ON CONFLICT(plan_id) DO UPDATE SET budget_tokens = excluded.budget_tokens, warned = 0",
        (plan_id, budget_tokens),
    )


def plan_budget(conn: sqlite3.Connection, plan_id: str) -> PlanBudget | None:
    """The plan's budget with what its tasks have spent so far; None without a budget."""
    row = conn.execute(
        "SELECT b.budget_tokens, b.warned,"
        " (SELECT COALESCE(SUM(t.tokens_in + t.tokens_out), 0) FROM tasks t"
        "  WHERE t.plan_id = b.plan_id) AS spent"
        " FROM plan_budgets b WHERE b.plan_id = ?",
        (plan_id,),
    ).fetchone()
    if row is None:
        return None
    return PlanBudget(plan_id, int(row[0]), bool(row[1]), int(row[2]))


def mark_warned(conn: sqlite3.Connection, plan_id: str) -> bool:
    """Record that the 80% warning was given; False if it already was (give it once)."""
    cursor = conn.execute(
        "UPDATE plan_budgets SET warned = 1 WHERE plan_id = ? AND warned = 0", (plan_id,)
    )
    return cursor.rowcount == 1
