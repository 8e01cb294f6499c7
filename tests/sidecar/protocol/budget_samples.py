"""Samples of the budget wire models (merged into `samples`)."""

from __future__ import annotations

from sidecar.protocol import (
    BudgetEvent,
    BudgetInfo,
    RunEventBody,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadSetBudgetParams,
    WireModel,
)

BUDGET_INFO = BudgetInfo(
    budget_tokens=10_000,
    budget_cost=0.5,
    spent_tokens=8_200,
    spent_cost=0.41,
    remaining_tokens=1_800,
    remaining_cost=0.09,
    warned=True,
)
"""A thread budget 82% spent, its warning given (the desktop tests show it too)."""

BUDGET_SAMPLES: dict[type[WireModel], WireModel] = {
    ThreadBudgetParams: ThreadBudgetParams(thread_id="t-1"),
    ThreadSetBudgetParams: ThreadSetBudgetParams(
        thread_id="t-1", budget_tokens=10_000, budget_cost=0.5
    ),
    ThreadBudgetResult: ThreadBudgetResult(
        thread_id="t-1", budget=BUDGET_INFO, spent_tokens=8_200, spent_cost=0.41
    ),
}

BUDGET_EVENT_SAMPLES: list[RunEventBody] = [
    BudgetEvent(
        scope="thread",
        state="warned",
        budget=BUDGET_INFO,
        message="80% of the thread's budget is spent",
    ),
]
