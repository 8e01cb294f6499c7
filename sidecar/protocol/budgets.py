"""Budgets on the wire: a thread's or a plan's token/cost limits and what was spent against them
(`BudgetInfo`, which `thread/budget` returns), and the `budget` run event (80% spent, spent,
raised, stopped, or a price that is unknown).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sidecar.protocol.models_base import WireModel

MAX_BUDGET_TOKENS = 1_000_000_000
MAX_BUDGET_COST = 1_000_000.0
BudgetState = Literal["warned", "spent", "raised", "stopped", "cost_unknown"]
"""`warned`: 80% of a limit is spent; `spent`: a limit is reached and the author is asked;
`raised`: the author raised it; `stopped`: the turn or task stopped on it; `cost_unknown`: a
model's price is unknown, so the cost limit counts only the priced part."""


class BudgetInfo(WireModel):
    """Limits (None: no such limit), what was spent against them and what remains."""

    budget_tokens: int | None = None
    budget_cost: float | None = Field(default=None, description="USD.")
    spent_tokens: int = 0
    spent_cost: float = Field(default=0.0, description="USD, the priced part.")
    remaining_tokens: int | None = None
    remaining_cost: float | None = None
    warned: bool = Field(default=False, description="80% of a limit is spent.")
    cost_unknown: bool = Field(default=False, description="Some usage has no known price.")


class BudgetEvent(WireModel):
    """A budget of the thread, or of one of its plans, changed state."""

    type: Literal["budget"] = "budget"
    scope: Literal["thread", "plan"]
    state: BudgetState
    plan_id: str | None = None
    budget: BudgetInfo
    message: str = Field(description="One line for the author.")
