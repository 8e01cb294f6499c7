"""thread/budget, thread/set_budget: a thread's token/cost budget and what it spent."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import ErrorCode, RpcError
from sidecar.protocol.budgets import (
    BudgetInfo,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadSetBudgetParams,
)
from sidecar.store.budgets import set_thread_budget, thread_budget, thread_spent


def _result(svc: Services, thread_id: str) -> ThreadBudgetResult:
    if not svc.store.has_thread(thread_id):
        raise RpcError(ErrorCode.THREAD_NOT_FOUND, f"thread not found: {thread_id}")
    budget = thread_budget(svc.store.conn, thread_id)
    spent = thread_spent(svc.store.conn, thread_id)
    return ThreadBudgetResult(
        thread_id=thread_id,
        budget=None if budget is None else BudgetInfo.model_validate(budget.fields()),
        spent_tokens=spent.tokens,
        spent_cost=spent.cost,
        cost_unknown=spent.cost_unknown,
    )


@registry.method("thread/budget")
async def thread_budget_get(svc: Services, params: ThreadBudgetParams) -> ThreadBudgetResult:
    return _result(svc, params.thread_id)


@registry.method("thread/set_budget")
async def thread_budget_set(svc: Services, params: ThreadSetBudgetParams) -> ThreadBudgetResult:
    """A turn of the thread that waits on the budget question still asks; the next step (or
    the answer) sees the new limits."""
    if not svc.store.has_thread(params.thread_id):
        raise RpcError(ErrorCode.THREAD_NOT_FOUND, f"thread not found: {params.thread_id}")
    set_thread_budget(svc.store.conn, params.thread_id, params.budget_tokens, params.budget_cost)
    return _result(svc, params.thread_id)
