"""A plan's token budget (`budget_tokens` in the plan's JSON).

Every usage report of a running attempt charges the plan: spent is what the plan's tasks have
recorded plus the reporting attempt's own tokens so far. At 80% the coordinator is told once (a
`plan_update` whose plan has `budget_warned` set, and a log line); at 100% the attempt stops at
its next step and the author is asked (a question: raise the budget, or stop the plan). Tasks
of the plan hitting the limit together share that one question. On an autonomous thread nobody
is asked: the plan stops. Tasks marked `optional` that have not started by the time 80% is spent
are cut: skipped with that reason (their dependents run on). A strong agent reports its usage
only when it ends, so it is charged then (it cannot be stopped mid-run by the plan's budget).
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from sidecar.coord.dag import PlanError
from sidecar.graph.deps import GraphDeps
from sidecar.graph.state import SubagentInput
from sidecar.graph.subagents.attempt import BudgetExceededError
from sidecar.graph.subagents.escalation import ask_author
from sidecar.graph.subagents.finish import finish_task
from sidecar.graph.subagents.records import change_task, emit_plan
from sidecar.store import TaskRecord
from sidecar.store.budgets import mark_warned, plan_budget, set_plan_budget

log = logging.getLogger(__name__)

WARN_AT = 0.8
MAX_BUDGET = 1_000_000_000
SPENT = "the plan's token budget is spent"
STOP = "Stop the plan"
_LOCKS: dict[str, asyncio.Lock] = {}


class PlanBudgetSpentError(BudgetExceededError):
    """The plan's budget ran out during this attempt."""


def parse_budget(arguments: dict[str, Any]) -> int | None:
    """`budget_tokens` of a plan's JSON: absent, or a positive whole number.

    Raises:
        PlanError: it is there but not a whole number from 1 to a billion.
    """
    raw = arguments.get("budget_tokens")
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_BUDGET:
        raise PlanError(f"budget_tokens must be a whole number from 1 to {MAX_BUDGET}: {raw!r}")
    return raw


def record_budget(deps: GraphDeps, plan_id: str, arguments: dict[str, Any]) -> None:
    """Store the plan's budget when its JSON names one (a replan without one keeps the old).

    Raises:
        PlanError: a bad `budget_tokens`.
    """
    budget = parse_budget(arguments)
    if budget is not None:
        set_plan_budget(deps.store.conn, plan_id, budget)


def charge(deps: GraphDeps, task: TaskRecord, live_tokens: int) -> None:
    """A running attempt of `task` has used `live_tokens` so far: warn at 80% (once), stop it
    at 100%.

    Raises:
        PlanBudgetSpentError: the plan's budget is spent.
    """
    budget = plan_budget(deps.store.conn, task.plan_id)
    if budget is None:
        return
    spent = budget.spent_tokens + live_tokens
    if spent >= budget.budget_tokens * WARN_AT and mark_warned(deps.store.conn, task.plan_id):
        log.info("plan %s: %d of %d tokens spent", task.plan_id, spent, budget.budget_tokens)
        emit_plan(deps.store, task.plan_id)
    if spent >= budget.budget_tokens:
        raise PlanBudgetSpentError(f"{SPENT}: {spent} of {budget.budget_tokens} tokens")


CUT = "cut: the plan's token budget is 80% spent and this task is optional"


def cut_reason(deps: GraphDeps, task: TaskRecord) -> str | None:
    """Why an optional task that is about to start is cut instead; None to run it."""
    if not task.optional:
        return None
    budget = plan_budget(deps.store.conn, task.plan_id)
    if budget is None or budget.spent_tokens < budget.budget_tokens * WARN_AT:
        return None
    return f"{CUT} ({budget.spent_tokens} of {budget.budget_tokens} tokens)"


def is_spent(error: str | None) -> bool:
    return error is not None and error.startswith(SPENT)


async def budget_spent(deps: GraphDeps, inp: SubagentInput, task: TaskRecord) -> bool:
    """The plan's budget stopped `task`: ask the author to raise it or stop (once for every
    task that hit it together). True to go on (raised); False once the task has ended."""
    lock = _LOCKS.setdefault(task.plan_id, asyncio.Lock())
    async with lock:
        budget = plan_budget(deps.store.conn, task.plan_id)
        if deps.coordinator.aborted(task.plan_id) or budget is None:
            finish_task(deps, inp, task, "cancelled", error=f"stopped: {SPENT}")
            return False
        if budget.spent_tokens < budget.budget_tokens:
            return True  # raised meanwhile (another task asked)
        summary = f"{budget.spent_tokens} of {budget.budget_tokens} tokens"
        raised = await _ask(deps, inp, task, budget.budget_tokens, budget.spent_tokens)
        if raised is None:
            deps.coordinator.abort_plan(task.plan_id)
            finish_task(deps, inp, task, "cancelled", error=f"stopped: {SPENT} ({summary})")
            return False
        set_plan_budget(deps.store.conn, task.plan_id, raised)
        emit_plan(deps.store, task.plan_id)
        return True


async def _ask(
    deps: GraphDeps, inp: SubagentInput, task: TaskRecord, limit: int, spent: int
) -> int | None:
    """The new budget the author chose, or None to stop (and on an autonomous thread)."""
    if deps.store.is_autonomous(inp["thread_id"]):
        return None
    offer = max(limit, spent) * 2
    raise_text = f"Raise the budget to {offer} tokens"
    payload = {
        "kind": "question",
        "title": "Plan budget spent",
        "body": f"The plan has spent {spent} of its {limit} tokens. Raise its budget or stop it?",
        "question": f"The plan has spent {spent} of its {limit} tokens. Raise it or stop?",
        "choices": [raise_text, STOP],
    }
    change_task(deps.store, task.plan_id, task.id, status="waiting", activity="waiting for you")
    answer = await ask_author(payload, task)
    text = str(answer.get("answer", "")).strip()
    if text == raise_text:
        return offer
    number = re.fullmatch(r"\D*?(\d[\d,_]*)\D*", text)
    if number is not None and text != STOP:
        chosen = int(re.sub(r"[,_]", "", number.group(1)))
        if spent < chosen <= MAX_BUDGET:
            return chosen
    return None
