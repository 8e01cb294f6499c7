"""The budget arithmetic and the author's answer: live usage adds to what was recorded, the
larger share of either limit decides, an unpriced step marks the cost unknown, a raise offers
double, a typed number raises the limit the budget has, and the notices go once."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.plans import thread_budget
from sidecar.plans.thread_budget import give_notices, offer, offer_text, parse_raise
from sidecar.store.budgets import Budget
from sidecar.turn.events import BudgetReported, TurnEvent

TOKENS = Budget("t", 1000, False, 700)
COST = Budget("t", None, False, 0, budget_cost=0.5, spent_cost=0.45)


def test_live_usage_adds_to_the_recorded_and_a_missing_price_marks_the_cost_unknown():
    assert TOKENS.plus(100, 0.01).spent_tokens == 800
    assert TOKENS.plus(100, 0.01).near and not TOKENS.plus(100, 0.01).spent
    assert TOKENS.plus(300, 0.0).spent
    assert COST.plus(10, None).cost_unknown and COST.plus(10, None).spent_cost == 0.45
    assert not COST.plus(0, None).cost_unknown  # nothing used, nothing unpriced


def test_the_larger_share_of_either_limit_decides():
    both = Budget("t", 1000, False, 100, budget_cost=0.5, spent_cost=0.5)
    assert both.share() == 1.0 and both.spent and not both.tokens_spent
    assert Budget("t", None, False, 10**9).share() == 0.0  # no limit, nothing to spend


def test_a_raise_offers_double_each_limit_from_what_it_reached():
    over = TOKENS.plus(900, 0.0)
    assert offer(over) == (3200, None)
    assert offer_text(offer(over)) == "Raise the budget to 3200 tokens"
    assert offer_text(offer(COST)) == "Raise the budget to $1.0000"


@pytest.mark.parametrize(
    ("answer", "budget", "raised"),
    [
        ({"answer": "Raise the budget to 2000 tokens"}, TOKENS, (2000, None)),
        ({"answer": "5,000"}, TOKENS, (5000, None)),
        ({"answer": "500"}, TOKENS, None),  # not above what was spent
        ({"answer": "Stop"}, TOKENS, None),
        ({"answer": "$2.50"}, COST, (None, 2.5)),
        ({"answer": "0.1"}, COST, None),
        ("nonsense", TOKENS, None),
    ],
)
def test_the_authors_answer_becomes_new_limits_or_a_stop(
    answer: Any, budget: Budget, raised: tuple[int | None, float | None] | None
):
    choice = offer_text(offer(budget))
    assert parse_raise(answer, budget, choice) == raised


def test_the_notices_go_once_each(monkeypatch: pytest.MonkeyPatch):
    sent: list[TurnEvent] = []
    monkeypatch.setattr(thread_budget, "emit", sent.append)
    flags = {"warn": True, "cost": True}

    def once(name: str) -> bool:
        was, flags[name] = flags[name], False
        return was

    budget = Budget("t", 1000, False, 900, budget_cost=1.0).plus(10, None)
    for _ in range(3):
        give_notices(
            budget, scope="thread", warn=lambda: once("warn"), note_cost=lambda: once("cost")
        )
    reported = [e for e in sent if isinstance(e, BudgetReported)]
    assert [e.state for e in reported] == ["warned", "cost_unknown"]
    assert len(reported) == len(sent)
    assert reported[0].budget.remaining_tokens == 90
