"""The run tree's plan row shows a plan's token budget: spent, remaining, and the 80% mark."""

from __future__ import annotations

from desktop.views.run_tree import plan_status_text
from tests.desktop.coord_support import plan


def test_a_plan_without_a_budget_shows_its_status_alone():
    assert plan_status_text(plan()) == "running"


def test_a_budgeted_plan_shows_spent_and_remaining_and_the_warning():
    budgeted = plan().model_copy(
        update={"budget_tokens": 10_000, "spent_tokens": 8_200, "remaining_tokens": 1_800}
    )
    assert plan_status_text(budgeted) == "running · 8,200 of 10,000 tokens (1,800 left)"
    warned = budgeted.model_copy(update={"budget_warned": True})
    assert plan_status_text(warned).endswith("(1,800 left) · 80% spent")
