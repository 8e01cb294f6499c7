"""A running task's usage charges its plan's budget and its thread's: whichever runs out first
stops it with its own reason; an optional task is cut at 80% of either."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from sidecar.plans.dag import TaskSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.plan_budget import (
    PlanBudgetSpentError,
    ThreadBudgetSpentError,
    charge,
    cut_reason,
    is_spent,
)
from sidecar.store import Store, TaskRecord, open_database
from sidecar.store.budgets import (
    mark_thread_warned,
    mark_warned,
    set_plan_budget,
    set_plan_cost_budget,
    set_thread_budget,
)


@pytest.fixture
def deps(tmp_path: Path) -> PlanDeps:
    store = Store(open_database(tmp_path / "atrium.db"))
    thread = store.create_thread("t")
    store.create_plan("p", thread.id, "goal", None)
    spec = TaskSpec("a", "a", "a", "general").to_json()
    store.replace_open_tasks("p", "goal", [spec, {**spec, "id": "b", "optional": True}])
    return PlanDeps(store, cast(Any, None), lambda: None, lambda: "", planner_for=lambda _m: None)


def _task(deps: PlanDeps, task_id: str = "a") -> TaskRecord:
    task = deps.store.get_task("p", task_id)
    assert task is not None
    return task


def _thread(deps: PlanDeps) -> str:
    plan = deps.store.get_plan("p")
    assert plan is not None
    return plan.thread_id


def _budgets(deps: PlanDeps, *, plan: int | None, thread: int | None) -> None:
    if plan is not None:
        set_plan_budget(deps.store.conn, "p", plan)
        mark_warned(deps.store.conn, "p")  # notices are tested apart; no run to send them to
    if thread is not None:
        set_thread_budget(deps.store.conn, _thread(deps), thread, None)
        mark_thread_warned(deps.store.conn, _thread(deps))


def test_without_budgets_nothing_stops(deps: PlanDeps):
    charge(deps, _task(deps), 10**8, 1000.0)


def test_the_plans_budget_stops_first_when_it_is_the_smaller(deps: PlanDeps):
    _budgets(deps, plan=100, thread=1000)
    with pytest.raises(PlanBudgetSpentError) as caught:
        charge(deps, _task(deps), 150)
    assert str(caught.value) == "the plan's token budget is spent: 150 of 100 tokens"
    assert is_spent(str(caught.value))


def test_the_threads_budget_stops_first_and_counts_recorded_tasks(deps: PlanDeps):
    _budgets(deps, plan=10_000, thread=1000)
    deps.store.update_task_from(_task(deps, "b"), tokens_in=900)
    charge(deps, _task(deps), 50)
    with pytest.raises(ThreadBudgetSpentError) as caught:
        charge(deps, _task(deps), 100)
    assert str(caught.value) == "the thread's budget is spent: 1,000 of 1,000 tokens"
    assert is_spent(str(caught.value))


def test_a_known_cost_stops_a_plan_with_a_cost_budget_and_an_unknown_one_does_not(
    deps: PlanDeps,
):
    set_plan_cost_budget(deps.store.conn, "p", 0.01)
    mark_warned(deps.store.conn, "p")
    deps.store.conn.execute("UPDATE plan_cost_budgets SET cost_noted = 1")
    charge(deps, _task(deps), 10**6, None)  # priced by nobody: counts as $0
    with pytest.raises(PlanBudgetSpentError, match=r"^the plan's cost budget is spent"):
        charge(deps, _task(deps), 10, 0.02)


def test_an_optional_task_is_cut_at_80_percent_of_the_thread_budget(deps: PlanDeps):
    _budgets(deps, plan=None, thread=1000)
    assert cut_reason(deps, _task(deps, "b")) is None
    deps.store.update_task_from(_task(deps), tokens_in=800)
    reason = cut_reason(deps, _task(deps, "b"))
    assert reason is not None and reason.startswith("cut: the thread's budget is 80% spent")
    assert cut_reason(deps, _task(deps)) is None  # not optional
