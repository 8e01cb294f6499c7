"""Stored plans and tasks as plain data (their wire shape, their specs), and the check of the
author's edits to a plan.

Free of LangGraph, so the runtime can check a resume value without loading the graph.
"""

from __future__ import annotations

from sidecar.plans.dag import TaskSpec, parse_tasks, validate_plan
from sidecar.plans.profiles import Profile
from sidecar.store import PlanRecord, Store, TaskRecord
from sidecar.turn.events import PlanChanged


def task_spec(task: TaskRecord) -> TaskSpec:
    return TaskSpec(
        task.id,
        task.title,
        task.objective,
        task.profile,
        task.depends_on,
        task.success_criteria,
        task.optional,
    )


def completed_specs(store: Store, plan_id: str) -> dict[str, TaskSpec]:
    """The plan's succeeded tasks: a new version may leave them out but not change them."""
    return {t.id: task_spec(t) for t in store.tasks(plan_id) if t.status == "succeeded"}


def validate_edit(
    store: Store, profiles: dict[str, Profile], plan_id: str, raw_tasks: object
) -> list[TaskSpec]:
    """The author's edited tasks of a plan, checked as the proposal was (one check for the
    resume request and for the dispatch node that applies it).

    Raises:
        PlanError: the edited tasks do not make a valid plan.
    """
    tasks = parse_tasks(raw_tasks)
    return validate_plan(tasks, profiles, completed=completed_specs(store, plan_id))


def plan_snapshot(store: Store, plan: PlanRecord) -> PlanChanged:
    """The plan as it stands: its record, its tasks and its budget (None without one)."""
    return PlanChanged(
        plan,
        tuple(store.tasks(plan.id)),
        store.budgets.plan_budget(plan.id),
        tuple(store.replaced_tasks(plan.id)),
    )
