"""Token and cost budgets of plans and threads: each limit, whether its 80% notice was given,
whether the "price unknown" notice was given, and what was spent.

A plan's spent is the sum of its tasks' recorded tokens and cost (every finished attempt adds
its own). A thread's spent is its main turns' recorded usage plus its plans' tasks. A running
attempt's or turn's usage is added by the caller that knows it (`Budget.plus`). A task with
tokens but no cost, or a turn with no cost, was priced by nobody: its cost is unknown, so a
cost budget counts only the known part.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

from sidecar.store.repository import Repository

BUDGET_SCHEMA = """
CREATE TABLE IF NOT EXISTS plan_budgets (
    plan_id TEXT PRIMARY KEY REFERENCES plans(id) ON DELETE CASCADE,
    budget_tokens INTEGER NOT NULL,
    warned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS plan_cost_budgets (
    plan_id TEXT PRIMARY KEY REFERENCES plans(id) ON DELETE CASCADE,
    budget_cost REAL NOT NULL,
    warned INTEGER NOT NULL DEFAULT 0,
    cost_noted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS thread_budgets (
    thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    budget_tokens INTEGER,
    budget_cost REAL,
    warned INTEGER NOT NULL DEFAULT 0,
    cost_noted INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""

WARN_AT = 0.8


@dataclass(frozen=True, slots=True)
class Budget:
    """A plan's or a thread's limits (tokens and/or USD; None: no such limit) and what was
    spent against them. `cost_unknown`: some of the spending has no known price."""

    owner_id: str
    budget_tokens: int | None
    warned: bool
    spent_tokens: int
    budget_cost: float | None = None
    spent_cost: float = 0.0
    cost_noted: bool = False
    cost_unknown: bool = False

    @property
    def plan_id(self) -> str:
        return self.owner_id

    @property
    def remaining_tokens(self) -> int | None:
        if self.budget_tokens is None:
            return None
        return max(0, self.budget_tokens - self.spent_tokens)

    @property
    def remaining_cost(self) -> float | None:
        if self.budget_cost is None:
            return None
        return max(0.0, self.budget_cost - self.spent_cost)

    def plus(self, tokens: int, cost: float | None) -> Budget:
        """With a running attempt's or turn's usage added; a None cost is an unknown price."""
        unknown = self.cost_unknown or (cost is None and tokens > 0)
        return replace(
            self,
            spent_tokens=self.spent_tokens + tokens,
            spent_cost=self.spent_cost + (cost or 0.0),
            cost_unknown=unknown,
        )

    def share(self) -> float:
        """The largest part of a limit spent (1.0: a limit is reached), rounded so that a sum
        of prices reaches a share its decimal values reach ($0.04 of $0.05 is 80%)."""
        parts = [0.0]
        if self.budget_tokens:
            parts.append(self.spent_tokens / self.budget_tokens)
        if self.budget_cost:
            parts.append(self.spent_cost / self.budget_cost)
        return round(max(parts), 9)

    @property
    def near(self) -> bool:
        return self.share() >= WARN_AT

    @property
    def spent(self) -> bool:
        return self.share() >= 1.0

    @property
    def tokens_spent(self) -> bool:
        return self.budget_tokens is not None and self.spent_tokens >= self.budget_tokens

    def summary(self) -> str:
        """ "1,200 of 1,000 tokens, $0.0100 of $0.0500"."""
        parts: list[str] = []
        if self.budget_tokens is not None:
            parts.append(f"{self.spent_tokens:,} of {self.budget_tokens:,} tokens")
        if self.budget_cost is not None:
            parts.append(f"${self.spent_cost:.4f} of ${self.budget_cost:.4f}")
        return ", ".join(parts)

    def fields(self) -> dict[str, object]:
        """The limits, spent and remaining, as the wire's budget fields."""
        return {
            "budget_tokens": self.budget_tokens,
            "budget_cost": self.budget_cost,
            "spent_tokens": self.spent_tokens,
            "spent_cost": self.spent_cost,
            "remaining_tokens": self.remaining_tokens,
            "remaining_cost": self.remaining_cost,
            "warned": self.warned,
            "cost_unknown": self.cost_unknown,
        }


PlanBudget = Budget


@dataclass(frozen=True, slots=True)
class Spent:
    tokens: int
    cost: float
    cost_unknown: bool


class BudgetRepo(Repository):
    """Limits, notices given, and what plans and threads spent."""

    def set_plan_budget(self, plan_id: str, budget_tokens: int) -> None:
        """Set (or raise) the plan's token budget; the 80% warning is given again for it."""
        self.conn.execute(
            "INSERT INTO plan_budgets(plan_id, budget_tokens, warned) VALUES (?, ?, 0)"
            " ON CONFLICT(plan_id) DO UPDATE SET budget_tokens = excluded.budget_tokens,"
            " warned = 0",
            (plan_id, budget_tokens),
        )

    def set_plan_cost_budget(self, plan_id: str, budget_cost: float) -> None:
        """Set (or raise) the plan's cost budget in USD; the 80% warning is given again for
        it."""
        self.conn.execute(
            "INSERT INTO plan_cost_budgets(plan_id, budget_cost, warned) VALUES (?, ?, 0)"
            " ON CONFLICT(plan_id) DO UPDATE SET budget_cost = excluded.budget_cost, warned = 0",
            (plan_id, budget_cost),
        )

    def plan_spent(self, plan_id: str) -> Spent:
        """What the plan's tasks have recorded."""
        row = self.conn.execute(
            "SELECT COALESCE(SUM(tokens_in + tokens_out), 0), COALESCE(SUM(cost), 0),"
            " COALESCE(MAX(cost <= 0 AND tokens_in + tokens_out > 0), 0)"
            " FROM tasks WHERE plan_id = ?",
            (plan_id,),
        ).fetchone()
        return Spent(int(row[0]), float(row[1]), bool(row[2]))

    def plan_budget(self, plan_id: str) -> Budget | None:
        """The plan's budget with what its tasks have spent so far; None without a budget."""
        tokens = self.conn.execute(
            "SELECT budget_tokens, warned FROM plan_budgets WHERE plan_id = ?", (plan_id,)
        ).fetchone()
        cost = self.conn.execute(
            "SELECT budget_cost, warned, cost_noted FROM plan_cost_budgets WHERE plan_id = ?",
            (plan_id,),
        ).fetchone()
        if tokens is None and cost is None:
            return None
        spent = self.plan_spent(plan_id)
        return Budget(
            plan_id,
            int(tokens[0]) if tokens is not None else None,
            bool(tokens is not None and tokens[1]) or bool(cost is not None and cost[1]),
            spent.tokens,
            float(cost[0]) if cost is not None else None,
            spent.cost,
            bool(cost is not None and cost[2]),
            spent.cost_unknown,
        )

    def mark_plan_warned(self, plan_id: str) -> bool:
        """Record that the plan's 80% warning was given; False if it already was (give it
        once)."""
        budget = self.plan_budget(plan_id)
        if budget is None or budget.warned:
            return False
        self.conn.execute("UPDATE plan_budgets SET warned = 1 WHERE plan_id = ?", (plan_id,))
        self.conn.execute("UPDATE plan_cost_budgets SET warned = 1 WHERE plan_id = ?", (plan_id,))
        return True

    def mark_plan_cost_noted(self, plan_id: str) -> bool:
        """Record that the plan was told its cost budget cannot be fully enforced; False if it
        already was."""
        cursor = self.conn.execute(
            "UPDATE plan_cost_budgets SET cost_noted = 1 WHERE plan_id = ? AND cost_noted = 0",
            (plan_id,),
        )
        return cursor.rowcount == 1

    def set_thread_budget(
        self, thread_id: str, budget_tokens: int | None, budget_cost: float | None
    ) -> None:
        """Set, change or (both None) remove the thread's budget; the notices are given
        again."""
        if budget_tokens is None and budget_cost is None:
            self.conn.execute("DELETE FROM thread_budgets WHERE thread_id = ?", (thread_id,))
            return
        self.conn.execute(
            "INSERT INTO thread_budgets(thread_id, budget_tokens, budget_cost) VALUES (?, ?, ?)"
            " ON CONFLICT(thread_id) DO UPDATE SET budget_tokens = excluded.budget_tokens,"
            " budget_cost = excluded.budget_cost, warned = 0, cost_noted = 0",
            (thread_id, budget_tokens, budget_cost),
        )

    def thread_spent(self, thread_id: str) -> Spent:
        """The thread's main turns' recorded usage plus every task of its plans."""
        turns = self.conn.execute(
            "SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0), COALESCE(SUM(cost), 0),"
            " COALESCE(MAX(cost IS NULL AND prompt_tokens + completion_tokens > 0), 0)"
            " FROM turn_usage WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        tasks = self.conn.execute(
            "SELECT COALESCE(SUM(t.tokens_in + t.tokens_out), 0), COALESCE(SUM(t.cost), 0),"
            " COALESCE(MAX(t.cost <= 0 AND t.tokens_in + t.tokens_out > 0), 0)"
            " FROM tasks t JOIN plans p ON p.id = t.plan_id WHERE p.thread_id = ?",
            (thread_id,),
        ).fetchone()
        return Spent(
            int(turns[0]) + int(tasks[0]),
            float(turns[1]) + float(tasks[1]),
            bool(turns[2]) or bool(tasks[2]),
        )

    def thread_budget(self, thread_id: str) -> Budget | None:
        """The thread's budget with what it has spent; None without a budget."""
        row = self.conn.execute(
            "SELECT budget_tokens, budget_cost, warned, cost_noted FROM thread_budgets"
            " WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        if row is None:
            return None
        spent = self.thread_spent(thread_id)
        return Budget(
            thread_id,
            None if row[0] is None else int(row[0]),
            bool(row[2]),
            spent.tokens,
            None if row[1] is None else float(row[1]),
            spent.cost,
            bool(row[3]),
            spent.cost_unknown,
        )

    def mark_thread_warned(self, thread_id: str) -> bool:
        """Record that the thread's 80% notice was given; False if it already was."""
        cursor = self.conn.execute(
            "UPDATE thread_budgets SET warned = 1 WHERE thread_id = ? AND warned = 0",
            (thread_id,),
        )
        return cursor.rowcount == 1

    def mark_thread_cost_noted(self, thread_id: str) -> bool:
        """Record that the thread was told its cost budget cannot be fully enforced (once)."""
        cursor = self.conn.execute(
            "UPDATE thread_budgets SET cost_noted = 1 WHERE thread_id = ?"
            " AND budget_cost IS NOT NULL AND cost_noted = 0",
            (thread_id,),
        )
        return cursor.rowcount == 1


# The same operations for a caller that holds a bare connection (tests, benchmarks); the
# sidecar's own code goes through `Store.budgets`.


def set_plan_budget(conn: sqlite3.Connection, plan_id: str, budget_tokens: int) -> None:
    BudgetRepo(conn).set_plan_budget(plan_id, budget_tokens)


def set_plan_cost_budget(conn: sqlite3.Connection, plan_id: str, budget_cost: float) -> None:
    BudgetRepo(conn).set_plan_cost_budget(plan_id, budget_cost)


def plan_spent(conn: sqlite3.Connection, plan_id: str) -> Spent:
    return BudgetRepo(conn).plan_spent(plan_id)


def plan_budget(conn: sqlite3.Connection, plan_id: str) -> Budget | None:
    return BudgetRepo(conn).plan_budget(plan_id)


def mark_warned(conn: sqlite3.Connection, plan_id: str) -> bool:
    return BudgetRepo(conn).mark_plan_warned(plan_id)


def mark_plan_cost_noted(conn: sqlite3.Connection, plan_id: str) -> bool:
    return BudgetRepo(conn).mark_plan_cost_noted(plan_id)


def set_thread_budget(
    conn: sqlite3.Connection,
    thread_id: str,
    budget_tokens: int | None,
    budget_cost: float | None,
) -> None:
    BudgetRepo(conn).set_thread_budget(thread_id, budget_tokens, budget_cost)


def thread_spent(conn: sqlite3.Connection, thread_id: str) -> Spent:
    return BudgetRepo(conn).thread_spent(thread_id)


def thread_budget(conn: sqlite3.Connection, thread_id: str) -> Budget | None:
    return BudgetRepo(conn).thread_budget(thread_id)


def mark_thread_warned(conn: sqlite3.Connection, thread_id: str) -> bool:
    return BudgetRepo(conn).mark_thread_warned(thread_id)


def mark_thread_cost_noted(conn: sqlite3.Connection, thread_id: str) -> bool:
    return BudgetRepo(conn).mark_thread_cost_noted(thread_id)
