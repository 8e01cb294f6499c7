"""A plan's budget (`budget_tokens` and/or `budget_cost` in USD, in the plan's JSON), and the
thread's budget as the plan's tasks spend it.

Every usage report of a running attempt charges the plan and its thread: spent is what was
recorded plus the reporting attempt's own tokens and cost so far. At 80% the coordinator is
told once (a `plan_update` whose plan has `budget_warned` set, a `budget` event, a log line); at
100% of either budget the attempt stops at its next step and the author is asked (raise the
budget, or stop the plan). Tasks hitting a limit together share that one question. On an
autonomous thread nobody is asked: the plan stops. A model whose price is unknown adds no cost,
so a cost budget counts only the priced part; that is said once. Tasks marked `optional` that
have not started by the time 80% of a budget is spent are cut: skipped with that reason (their
dependents run on). A strong agent is charged on the usage its CLI streams (Claude Code per
model message, Codex per turn: the agents server's `usage` events), so it too is warned at 80%
and stopped at 100% mid-run; its result's own figures are what is recorded when it ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sidecar.plans.attempt import BudgetExceededError
from sidecar.plans.dag import PlanError
from sidecar.plans.deps import PlanDeps
from sidecar.plans.escalation import ask_author
from sidecar.plans.finish import finish_task
from sidecar.plans.records import change_task, emit_plan
from sidecar.plans.thread_budget import (
    THREAD_SPENT,
    Scope,
    current,
    emit_budget,
    give_notices,
    offer,
    offer_text,
    parse_raise,
    thread_notices,
)
from sidecar.store import TaskRecord
from sidecar.store.budgets import WARN_AT, Budget
from sidecar.turn.questions import AuthorQuestion
from sidecar.turn.state import SubagentInput

log = logging.getLogger(__name__)

MAX_BUDGET = 1_000_000_000
MAX_COST = 1_000_000.0
SPENT = "the plan's token budget is spent"
COST_SPENT = "the plan's cost budget is spent"
STOP = "Stop the plan"
_LOCKS: dict[str, asyncio.Lock] = {}


class PlanBudgetSpentError(BudgetExceededError):
    """The plan's budget ran out during this attempt."""


class ThreadBudgetSpentError(BudgetExceededError):
    """The thread's budget ran out during this attempt."""


def parse_budget(arguments: dict[str, Any]) -> int | None:
    """`budget_tokens` of a plan's JSON: absent, or a positive whole number. `budget_cost` is
    checked too.

    Raises:
        PlanError: `budget_tokens` is there but not a whole number from 1 to a billion, or
            `budget_cost` is there but not a number of USD above 0.
    """
    parse_cost(arguments)
    raw = arguments.get("budget_tokens")
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_BUDGET:
        raise PlanError(f"budget_tokens must be a whole number from 1 to {MAX_BUDGET}: {raw!r}")
    return raw


def parse_cost(arguments: dict[str, Any]) -> float | None:
    """`budget_cost` of a plan's JSON: absent, or USD above 0 (at most a million).

    Raises:
        PlanError: it is there but not such a number.
    """
    raw = arguments.get("budget_cost")
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= MAX_COST:
        raise PlanError(f"budget_cost must be a number of USD above 0, at most {MAX_COST:,.0f}")
    return float(raw)


def record_budget(deps: PlanDeps, plan_id: str, arguments: dict[str, Any]) -> None:
    """Store the plan's budgets its JSON names (a replan without one keeps the old).

    Raises:
        PlanError: a bad `budget_tokens` or `budget_cost`.
    """
    tokens, cost = parse_budget(arguments), parse_cost(arguments)
    if tokens is not None:
        deps.store.budgets.set_plan_budget(plan_id, tokens)
    if cost is not None:
        deps.store.budgets.set_plan_cost_budget(plan_id, cost)


def charge(
    deps: PlanDeps, task: TaskRecord, live_tokens: int, live_cost: float | None = 0.0
) -> None:
    """A running attempt of `task` has used `live_tokens` and `live_cost` (None: its price is
    unknown) so far: give the 80% notices (once), stop it at 100% of the plan's or the
    thread's budget, whichever runs out first.

    Raises:
        PlanBudgetSpentError: the plan's budget is spent.
        ThreadBudgetSpentError: the thread's budget is spent.
    """
    budgets, plan_id = deps.store.budgets, task.plan_id
    stored = budgets.plan_budget(plan_id)
    if stored is not None:
        budget = stored.plus(live_tokens, live_cost)
        if give_notices(
            budget,
            scope="plan",
            warn=lambda: budgets.mark_plan_warned(plan_id),
            note_cost=lambda: budgets.mark_plan_cost_noted(plan_id),
            plan_id=plan_id,
        ):
            emit_plan(deps.store, plan_id)
        if budget.spent:
            raise PlanBudgetSpentError(f"{_plan_reason(budget)}: {budget.summary()}")
    thread_id = _thread_of(deps, task)
    whole = None if thread_id is None else current(deps, thread_id, live_tokens, live_cost)
    if whole is not None:
        thread_notices(deps, whole)
        if whole.spent:
            raise ThreadBudgetSpentError(f"{THREAD_SPENT}: {whole.summary()}")


def _plan_reason(budget: Budget) -> str:
    return SPENT if budget.tokens_spent or budget.budget_cost is None else COST_SPENT


def _thread_of(deps: PlanDeps, task: TaskRecord) -> str | None:
    plan = deps.store.get_plan(task.plan_id)
    return None if plan is None else plan.thread_id


def cut_reason(deps: PlanDeps, task: TaskRecord) -> str | None:
    """Why an optional task that is about to start is cut instead; None to run it."""
    if not task.optional:
        return None
    budget = deps.store.budgets.plan_budget(task.plan_id)
    if budget is not None and budget.near:
        tokens = budget.budget_tokens and budget.spent_tokens >= budget.budget_tokens * WARN_AT
        kind = "token" if tokens or budget.budget_cost is None else "cost"
        return f"cut: the plan's {kind} budget is 80% spent and this task is optional" + (
            f" ({budget.summary()})"
        )
    thread_id = _thread_of(deps, task)
    whole = None if thread_id is None else current(deps, thread_id)
    if whole is not None and whole.near:
        return (
            f"cut: the thread's budget is 80% spent and this task is optional ({whole.summary()})"
        )
    return None


def is_spent(error: str | None) -> bool:
    return error is not None and error.startswith((SPENT, COST_SPENT, THREAD_SPENT))


async def budget_spent(deps: PlanDeps, inp: SubagentInput, task: TaskRecord) -> bool:
    """A budget stopped `task`: for the plan's, then the thread's, ask the author to raise it
    or stop (once for every task that hit it together). True to go on (raised); False once
    the task has ended."""
    return await _settle_plan(deps, inp, task) and await _settle_thread(deps, inp, task)


async def _settle_plan(deps: PlanDeps, inp: SubagentInput, task: TaskRecord) -> bool:
    async with _LOCKS.setdefault(task.plan_id, asyncio.Lock()):
        budget = deps.store.budgets.plan_budget(task.plan_id)
        if deps.coordinator.aborted(task.plan_id):
            reason = _plan_reason(budget) if budget is not None and budget.spent else THREAD_SPENT
            finish_task(deps, inp, task, "cancelled", error=f"stopped: {reason}")
            return False
        if budget is None or not budget.spent:
            return True  # none, or raised meanwhile (another task asked)
        raised = await _ask(deps, inp, task, budget, "plan")
        if raised is None:
            _stop(deps, inp, task, budget, scope="plan", reason=_plan_reason(budget))
            return False
        tokens, cost = raised
        if tokens is not None:
            deps.store.budgets.set_plan_budget(task.plan_id, tokens)
        if cost is not None:
            deps.store.budgets.set_plan_cost_budget(task.plan_id, cost)
        _raised("plan", deps.store.budgets.plan_budget(task.plan_id), task.plan_id)
        emit_plan(deps.store, task.plan_id)
        return True


async def _settle_thread(deps: PlanDeps, inp: SubagentInput, task: TaskRecord) -> bool:
    thread_id = _thread_of(deps, task)
    if thread_id is None:
        return True
    async with _LOCKS.setdefault(f"thread:{thread_id}", asyncio.Lock()):
        if deps.coordinator.aborted(task.plan_id):
            finish_task(deps, inp, task, "cancelled", error=f"stopped: {THREAD_SPENT}")
            return False
        budget = current(deps, thread_id)
        if budget is None or not budget.spent:
            return True
        raised = await _ask(deps, inp, task, budget, "thread")
        if raised is None:
            _stop(deps, inp, task, budget, scope="thread", reason=THREAD_SPENT)
            return False
        deps.store.budgets.set_thread_budget(thread_id, *raised)
        _raised("thread", current(deps, thread_id), None)
        return True


def _raised(scope: Scope, budget: Budget | None, plan_id: str | None) -> None:
    if budget is not None:
        text = f"The {scope}'s budget was raised ({budget.summary()})"
        emit_budget(scope, "raised", budget, text, plan_id)


def _stop(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    budget: Budget,
    *,
    scope: Scope,
    reason: str,
) -> None:
    deps.coordinator.abort_plan(task.plan_id)
    text = f"stopped: {reason} ({budget.summary()})"
    log.info("plan %s %s", task.plan_id, text)
    emit_budget(scope, "stopped", budget, f"Plan {text}", task.plan_id)
    finish_task(deps, inp, task, "cancelled", error=text)


async def _ask(
    deps: PlanDeps, inp: SubagentInput, task: TaskRecord, budget: Budget, scope: Scope
) -> tuple[int | None, float | None] | None:
    """The new limits the author chose, or None to stop (and on an autonomous thread)."""
    if deps.store.is_autonomous(inp["thread_id"]):
        return None
    choice = offer_text(offer(budget))
    who = "The plan" if scope == "plan" else "This thread"
    question = f"{who} has spent {budget.summary()}. Raise its budget or stop the plan?"
    payload: AuthorQuestion = {
        "kind": "question",
        "title": f"{scope.capitalize()} budget spent",
        "body": question,
        "question": question,
        "choices": [choice, STOP],
    }
    change_task(deps.store, task.plan_id, task.id, status="waiting", activity="waiting for you")
    emit_budget(scope, "spent", budget, question, task.plan_id)
    answer = await ask_author(payload, task)
    return parse_raise(answer, budget, choice, STOP)
