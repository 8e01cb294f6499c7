"""A thread's token and/or cost budget, set by the author (`thread/set_budget`).

Spent is the thread's main turns (their recorded usage, plus the running turn's so far) and
every task of its plans. Before each planner step of the author's own turn the budget is
checked: at 80% a `budget` notice is sent once (and logged); at 100% the turn stops before the
step and the author is asked to raise the budget or stop. On an autonomous thread nobody is
asked: the turn ends with the reason as its answer. A model whose price LiteLLM does not know
adds no cost: the cost limit then counts only the priced part, which is said once. Tasks charge
the same budget (`plans.plan_budget`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, cast

from langgraph.types import interrupt

from sidecar.llm.window import turn_cost
from sidecar.plans.deps import PlanDeps
from sidecar.store.budgets import Budget
from sidecar.turn.events import (
    BudgetReported,
    BudgetScope,
    BudgetState,
    TokenStreamed,
    emit,
)
from sidecar.turn.questions import AuthorQuestion
from sidecar.turn.state import TurnState

log = logging.getLogger(__name__)

THREAD_SPENT = "the thread's budget is spent"
STOP = "Stop"
MAX_TOKENS = 1_000_000_000
MAX_COST = 1_000_000.0

Scope = BudgetScope


def emit_budget(
    scope: BudgetScope,
    state: BudgetState,
    budget: Budget,
    message: str,
    plan_id: str | None = None,
) -> None:
    """A `budget` run event: the budget's limits, spent and remaining, and one line."""
    emit(BudgetReported(scope, state, budget, message, plan_id))


def give_notices(
    budget: Budget,
    *,
    scope: Scope,
    warn: Callable[[], bool],
    note_cost: Callable[[], bool],
    plan_id: str | None = None,
) -> bool:
    """The 80% notice and the "price unknown" notice, each once (`warn` and `note_cost` record
    that it was given and say whether it was not yet). True if the 80% notice went now."""
    owner = f"{scope} {budget.owner_id}"
    warned = budget.near and warn()
    if warned:
        log.info("%s: 80%% of its budget is spent (%s)", owner, budget.summary())
        emit_budget(scope, "warned", budget, f"80% of the {scope}'s budget is spent", plan_id)
    if budget.budget_cost is not None and budget.cost_unknown and note_cost():
        text = (
            f"The {scope}'s cost budget cannot be enforced in full: a model's price is unknown,"
            " so its usage counts as $0"
        )
        log.info("%s: %s", owner, text)
        emit_budget(scope, "cost_unknown", budget, text, plan_id)
    return warned


def current(deps: PlanDeps, thread_id: str, tokens: int = 0, cost: float | None = 0.0):
    """The thread's budget with `tokens`/`cost` not yet recorded added; None without one."""
    stored = deps.store.budgets.thread_budget(thread_id)
    return None if stored is None else stored.plus(tokens, cost)


def thread_notices(deps: PlanDeps, budget: Budget) -> None:
    budgets, thread_id = deps.store.budgets, budget.owner_id
    give_notices(
        budget,
        scope="thread",
        warn=lambda: budgets.mark_thread_warned(thread_id),
        note_cost=lambda: budgets.mark_thread_cost_noted(thread_id),
    )


def check_turn(deps: PlanDeps, state: TurnState) -> dict[str, Any] | None:
    """Before a planner step of the author's own turn: None to take the step; else the
    update that ends the turn (the budget is spent and the author stopped, or nobody could be
    asked). May interrupt the turn to ask the author."""
    if state.get("agent"):
        return None
    budget = current(deps, state["thread_id"], *_turn_so_far(deps, state))
    if budget is None:
        return None
    thread_notices(deps, budget)
    if not budget.spent:
        return None
    if deps.store.is_autonomous(state["thread_id"]):
        return _stop(budget, " The thread is autonomous, so nobody was asked.")
    raised = _ask(budget)
    if raised is None:
        return _stop(budget, "")
    deps.store.budgets.set_thread_budget(budget.owner_id, *raised)
    after = current(deps, budget.owner_id, *_turn_so_far(deps, state))
    if after is not None:
        emit_budget(
            "thread", "raised", after, f"The thread's budget was raised ({after.summary()})"
        )
    return None


def _turn_so_far(deps: PlanDeps, state: TurnState) -> tuple[int, float | None]:
    """Tokens and cost of the running turn's steps (recorded only when the turn ends)."""
    usage = state.get("usage") or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    if not (prompt or completion):
        return 0, 0.0
    config = getattr(deps.planner(), "config", None)
    model = getattr(config, "model", None)
    cost = turn_cost(model, prompt, completion) if isinstance(model, str) else None
    return prompt + completion, cost


def _stop(budget: Budget, why: str) -> dict[str, Any]:
    text = f"Stopped: {THREAD_SPENT} ({budget.summary()}).{why}"
    emit(TokenStreamed(text))
    emit_budget("thread", "stopped", budget, text)
    return {"answer": text, "route": "persist"}


def offer(budget: Budget) -> tuple[int | None, float | None]:
    """What "raise" offers: every limit doubled from what it or its spending reached."""
    tokens = None
    if budget.budget_tokens is not None:
        tokens = min(MAX_TOKENS, max(budget.budget_tokens, budget.spent_tokens) * 2)
    cost = None
    if budget.budget_cost is not None:
        cost = min(MAX_COST, round(max(budget.budget_cost, budget.spent_cost) * 2, 4))
    return tokens, cost


def offer_text(limits: tuple[int | None, float | None]) -> str:
    tokens, cost = limits
    parts = [f"{tokens} tokens"] if tokens is not None else []
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return "Raise the budget to " + " and ".join(parts)


def parse_raise(
    answer: object, budget: Budget, choice: str, stop: str = STOP
) -> tuple[int | None, float | None] | None:
    """The limits the author chose: the offer, or a number (tokens when the budget has a token
    limit, else USD) above what was spent; None to stop."""
    text = str(
        cast(dict[str, Any], answer).get("answer", "") if isinstance(answer, dict) else answer
    )
    text = text.strip()
    if text == choice:
        return offer(budget)
    number = re.fullmatch(r"[^\d]*?(\d[\d,_]*(?:\.\d+)?)\D*", text)
    if number is None or text == stop:
        return None
    chosen = float(re.sub(r"[,_]", "", number.group(1)))
    if budget.budget_tokens is not None:
        if budget.spent_tokens < chosen <= MAX_TOKENS:
            return int(chosen), budget.budget_cost
        return None
    if budget.spent_cost < chosen <= MAX_COST:
        return None, chosen
    return None


def _ask(budget: Budget) -> tuple[int | None, float | None] | None:
    choice = offer_text(offer(budget))
    question = f"This thread has spent {budget.summary()}. Raise its budget or stop?"
    ask: AuthorQuestion = {
        "kind": "question",
        "title": "Thread budget spent",
        "body": question,
        "question": question,
        "choices": [choice, STOP],
    }
    answer = interrupt(ask)
    return parse_raise(answer, budget, choice)
