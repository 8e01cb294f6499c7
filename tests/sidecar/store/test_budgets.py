"""A plan's token budget in the store: spent is what its tasks recorded, the 80% warning is
given once per limit, and raising the limit arms it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.plans.dag import TaskSpec
from sidecar.store import Store, open_database
from sidecar.store.budgets import mark_warned, plan_budget, set_plan_budget


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(open_database(tmp_path / "atrium.db"))
    thread = store.create_thread("t")
    store.create_plan("p", thread.id, "goal", None)
    store.replace_open_tasks(
        "p",
        "goal",
        [TaskSpec(t, t, t, "general").to_json() for t in ("a", "b")],
    )
    return store


def test_a_plan_without_a_budget_has_none(store: Store) -> None:
    assert plan_budget(store.conn, "p") is None


def test_spent_sums_every_tasks_tokens_and_remaining_never_goes_below_zero(store: Store) -> None:
    set_plan_budget(store.conn, "p", 1000)
    for task_id, used in (("a", 300), ("b", 900)):
        task = store.get_task("p", task_id)
        assert task is not None
        store.update_task_from(task, tokens_in=used, tokens_out=10)
    budget = plan_budget(store.conn, "p")
    assert budget is not None
    assert (budget.spent_tokens, budget.remaining_tokens) == (1220, 0)


def test_the_warning_is_given_once_and_again_after_a_raise(store: Store) -> None:
    set_plan_budget(store.conn, "p", 1000)
    assert mark_warned(store.conn, "p") is True
    assert mark_warned(store.conn, "p") is False
    set_plan_budget(store.conn, "p", 5000)
    budget = plan_budget(store.conn, "p")
    assert budget is not None and (budget.budget_tokens, budget.warned) == (5000, False)
    assert mark_warned(store.conn, "p") is True
