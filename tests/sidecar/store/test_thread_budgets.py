"""A thread's budget in the store: spent is its main turns' recorded usage plus its plans'
tasks (300 turns add up exactly), unpriced usage is flagged, the notices are given once per
limit, and a plan's cost budget sits beside its token budget."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sidecar.plans.dag import TaskSpec
from sidecar.store import Store, open_database
from sidecar.store.budgets import (
    mark_plan_cost_noted,
    mark_thread_cost_noted,
    mark_thread_warned,
    mark_warned,
    plan_budget,
    set_plan_budget,
    set_plan_cost_budget,
    set_thread_budget,
    thread_budget,
    thread_spent,
)
from sidecar.store.context import ContextRepo


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(open_database(tmp_path / "atrium.db"))


def _plan(store: Store, thread_id: str, plan_id: str, used: dict[str, tuple[int, float]]) -> None:
    store.create_plan(plan_id, thread_id, "goal", None)
    store.replace_open_tasks(
        plan_id, "goal", [TaskSpec(t, t, t, "general").to_json() for t in used]
    )
    for task_id, (tokens, cost) in used.items():
        task = store.get_task(plan_id, task_id)
        assert task is not None
        store.update_task_from(task, tokens_in=tokens, tokens_out=0, cost=cost)


def test_a_thread_without_a_budget_has_none_but_still_reports_what_it_spent(store: Store):
    thread = store.create_thread("t")
    ContextRepo(store.conn).record_usage(
        "turn-1", thread.id, model="m", prompt_tokens=10, completion_tokens=5, cost=0.5
    )
    assert thread_budget(store.conn, thread.id) is None
    spent = thread_spent(store.conn, thread.id)
    assert (spent.tokens, spent.cost, spent.cost_unknown) == (15, 0.5, False)


def test_300_turns_and_two_plans_add_up_to_the_threads_spent(store: Store):
    thread, other = store.create_thread("t"), store.create_thread("other")
    usage = ContextRepo(store.conn)
    for i in range(300):
        usage.record_usage(
            f"turn-{i}", thread.id, model="m", prompt_tokens=i, completion_tokens=2, cost=0.001
        )
    usage.record_usage("x", other.id, model="m", prompt_tokens=999, completion_tokens=0, cost=9)
    _plan(store, thread.id, "p1", {"a": (100, 0.01), "b": (50, 0.02)})
    _plan(store, thread.id, "p2", {"a": (7, 0.003)})
    _plan(store, other.id, "p3", {"a": (10_000, 5.0)})
    set_thread_budget(store.conn, thread.id, 100_000, 1.0)

    started = time.perf_counter()
    budget = thread_budget(store.conn, thread.id)
    elapsed = time.perf_counter() - started

    assert budget is not None
    assert budget.spent_tokens == sum(range(300)) + 2 * 300 + 157
    assert budget.spent_cost == pytest.approx(0.3 + 0.033)
    assert budget.remaining_tokens == 100_000 - budget.spent_tokens
    assert budget.remaining_cost == pytest.approx(1.0 - 0.333)
    assert not budget.cost_unknown and not budget.near
    assert elapsed < 0.05


def test_a_turn_or_task_without_a_price_makes_the_cost_unknown(store: Store):
    thread = store.create_thread("t")
    ContextRepo(store.conn).record_usage(
        "turn-1", thread.id, model="local", prompt_tokens=10, completion_tokens=0, cost=None
    )
    assert thread_spent(store.conn, thread.id).cost_unknown is True
    other = store.create_thread("u")
    _plan(store, other.id, "p", {"a": (10, 0.0)})
    assert thread_spent(store.conn, other.id).cost_unknown is True


def test_thread_notices_are_given_once_and_again_after_a_change(store: Store):
    thread = store.create_thread("t")
    set_thread_budget(store.conn, thread.id, 1000, 0.5)
    assert mark_thread_warned(store.conn, thread.id) is True
    assert mark_thread_warned(store.conn, thread.id) is False
    assert mark_thread_cost_noted(store.conn, thread.id) is True
    assert mark_thread_cost_noted(store.conn, thread.id) is False
    set_thread_budget(store.conn, thread.id, 2000, None)
    budget = thread_budget(store.conn, thread.id)
    assert budget is not None
    assert (budget.budget_tokens, budget.budget_cost, budget.warned) == (2000, None, False)
    assert mark_thread_cost_noted(store.conn, thread.id) is False  # no cost limit to note


def test_removing_a_thread_budget_leaves_none(store: Store):
    thread = store.create_thread("t")
    set_thread_budget(store.conn, thread.id, 1000, None)
    set_thread_budget(store.conn, thread.id, None, None)
    assert thread_budget(store.conn, thread.id) is None


def test_a_plan_may_have_a_cost_budget_alone_or_beside_its_token_budget(store: Store):
    thread = store.create_thread("t")
    _plan(store, thread.id, "p", {"a": (400, 0.04)})
    set_plan_cost_budget(store.conn, "p", 0.05)
    cost_only = plan_budget(store.conn, "p")
    assert cost_only is not None
    assert (cost_only.budget_tokens, cost_only.remaining_tokens) == (None, None)
    assert cost_only.spent_cost == pytest.approx(0.04) and cost_only.near
    assert mark_warned(store.conn, "p") is True and mark_warned(store.conn, "p") is False
    set_plan_budget(store.conn, "p", 1000)
    both = plan_budget(store.conn, "p")
    assert both is not None and both.warned is True  # the cost warning still stands
    assert both.summary() == "400 of 1,000 tokens, $0.0400 of $0.0500"
    assert mark_plan_cost_noted(store.conn, "p") is True
    assert mark_plan_cost_noted(store.conn, "p") is False
