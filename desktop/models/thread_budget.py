"""`ThreadBudgetState`: the shown thread's token/cost budget and what it spent (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.models.emitter import Emitter
from sidecar.protocol import ThreadBudgetResult


def _cost(value: float) -> str:
    return f"${value:.4f}"


def spent_of_budget(
    tokens: tuple[int, int | None, int | None], cost: tuple[float, float | None, float | None]
) -> list[str]:
    """ "8,200 of 10,000 tokens (1,800 left)" and "$0.4100 of $0.5000 ($0.0900 left)" for each
    of (spent, budget, remaining) that has a budget (a thread's, a plan's)."""
    parts: list[str] = []
    spent_tokens, budget_tokens, remaining_tokens = tokens
    if budget_tokens is not None:
        parts.append(
            f"{spent_tokens:,} of {budget_tokens:,} tokens ({remaining_tokens or 0:,} left)"
        )
    spent_cost, budget_cost, remaining_cost = cost
    if budget_cost is not None:
        parts.append(
            f"{_cost(spent_cost)} of {_cost(budget_cost)} ({_cost(remaining_cost or 0.0)} left)"
        )
    return parts


def describe_budget(result: ThreadBudgetResult | None) -> str:
    """One line for the run tree's header: spent, and with a budget what remains."""
    if result is None:
        return ""
    budget = result.budget
    if budget is None:
        return f"Spent {result.spent_tokens:,} tokens, {_cost(result.spent_cost)} · no budget"
    parts = spent_of_budget(
        (budget.spent_tokens, budget.budget_tokens, budget.remaining_tokens),
        (budget.spent_cost, budget.budget_cost, budget.remaining_cost),
    )
    text = "Budget: " + ", ".join(parts)
    if budget.warned:
        text += " · 80% spent"
    if budget.cost_unknown and budget.budget_cost is not None:
        text += " · some prices unknown"
    return text


@dataclass
class ThreadBudgetState:
    """Events: `changed()`."""

    thread_id: str | None = None
    result: ThreadBudgetResult | None = None
    error: str | None = None
    changed: Emitter[[]] = field(default_factory=Emitter)

    def select(self, thread_id: str | None) -> None:
        self.thread_id, self.result, self.error = thread_id, None, None
        self.changed.emit()

    def load(self, result: ThreadBudgetResult) -> None:
        if result.thread_id == self.thread_id:
            self.result, self.error = result, None
            self.changed.emit()

    def fail(self, thread_id: str, message: str) -> None:
        if thread_id == self.thread_id:
            self.error = message
            self.changed.emit()
