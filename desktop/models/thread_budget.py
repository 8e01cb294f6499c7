"""`ThreadBudgetState`: the shown thread's token/cost budget and what it spent (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.models.emitter import Emitter
from sidecar.protocol.budgets import ThreadBudgetResult


def _cost(value: float) -> str:
    return f"${value:.4f}"


def describe_budget(result: ThreadBudgetResult | None) -> str:
    """One line for the run tree's header: spent, and with a budget what remains."""
    if result is None:
        return ""
    budget = result.budget
    if budget is None:
        return f"Spent {result.spent_tokens:,} tokens, {_cost(result.spent_cost)} · no budget"
    parts: list[str] = []
    if budget.budget_tokens is not None:
        parts.append(
            f"{budget.spent_tokens:,} of {budget.budget_tokens:,} tokens"
            f" ({budget.remaining_tokens or 0:,} left)"
        )
    if budget.budget_cost is not None:
        parts.append(
            f"{_cost(budget.spent_cost)} of {_cost(budget.budget_cost)}"
            f" ({_cost(budget.remaining_cost or 0.0)} left)"
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
