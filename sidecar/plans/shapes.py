"""Stored plans and tasks as plain data (their wire shape, their specs), and the check of the
author's edits to a plan.

Free of LangGraph, so the runtime can check a resume value without loading the graph.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sidecar.plans.dag import TaskSpec, parse_tasks, validate_plan
from sidecar.plans.profiles import Profile
from sidecar.store import PlanRecord, Store, TaskRecord
from sidecar.store.budgets import plan_budget


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


_INTERNAL_FIELDS = ("seq", "version")


def task_dict(task: TaskRecord) -> dict[str, Any]:
    data = asdict(task)
    for name in _INTERNAL_FIELDS:
        data.pop(name)
    data["depends_on"] = list(task.depends_on)
    return data


def plan_dict(store: Store, plan: PlanRecord) -> dict[str, Any]:
    return {
        "id": plan.id,
        "thread_id": plan.thread_id,
        "goal": plan.goal,
        "version": plan.version,
        "status": plan.status,
        "created_at": plan.created_at,
        "tasks": [task_dict(t) for t in store.tasks(plan.id)],
        **_budget_fields(store, plan.id),
    }


def _budget_fields(store: Store, plan_id: str) -> dict[str, Any]:
    """The plan's token and cost budget, what it spent and what remains; nothing without one."""
    budget = plan_budget(store.conn, plan_id)
    if budget is None:
        return {}
    fields = budget.fields()
    fields["budget_warned"] = fields.pop("warned")
    return fields
