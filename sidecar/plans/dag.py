"""Task plans: a goal and a DAG of 1 to 20 tasks, validated before anything runs.

Every error is a `PlanError` whose message the planner (or the author) can act on: it names the
task and what is wrong with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, cast

from sidecar.plans.profiles import Profile

MAX_TASKS = 20
MAX_DELEGATED = 64
"""A batch of independent delegated tasks (no plan, no approval) may be larger than a plan."""
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class PlanError(ValueError):
    """The plan is not valid; the message says which task and why."""


@dataclass(frozen=True, slots=True)
class TaskSpec:
    id: str
    title: str
    objective: str
    profile: str
    depends_on: tuple[str, ...] = ()
    success_criteria: str = ""
    optional: bool = False
    """Cut (skipped, not run) when the plan's budget is 80% spent before the task starts."""
    writes: bool = False
    """The task changes files: a read-only profile cannot take it (the roster reassigns it)."""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "depends_on": list(self.depends_on)}


def parse_tasks(raw: object) -> list[TaskSpec]:
    """Tasks from JSON (the planner's tool arguments, `/plan`, the author's edits).

    Raises:
        PlanError: not a list of task objects with string fields.
    """
    if not isinstance(raw, list):
        raise PlanError("tasks must be a list of task objects")
    return [_parse_task(item, n) for n, item in enumerate(cast(list[object], raw), start=1)]


def _parse_task(item: object, n: int) -> TaskSpec:
    if not isinstance(item, dict):
        raise PlanError(f"task #{n} must be an object")
    data = cast(dict[str, Any], item)
    fields: dict[str, str] = {}
    for key in ("id", "title", "objective", "profile"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            raise PlanError(f"task #{n} needs a non-empty string {key!r}")
        fields[key] = value.strip()
    deps = data.get("depends_on", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in cast(list[object], deps)):
        raise PlanError(f"task {fields['id']!r}: depends_on must be a list of task ids")
    criteria = data.get("success_criteria", "")
    optional = data.get("optional", False)
    if not isinstance(optional, bool):
        raise PlanError(f"task {fields['id']!r}: optional must be true or false")
    writes = data.get("writes", False)
    if not isinstance(writes, bool):
        raise PlanError(f"task {fields['id']!r}: writes must be true or false")
    return TaskSpec(
        depends_on=tuple(cast(list[str], deps)),
        success_criteria=criteria if isinstance(criteria, str) else str(criteria),
        optional=optional,
        writes=writes,
        **fields,
    )


def validate_plan(
    tasks: Iterable[TaskSpec],
    profiles: Mapping[str, Profile],
    *,
    completed: Mapping[str, TaskSpec] | None = None,
    max_tasks: int = MAX_TASKS,
) -> list[TaskSpec]:
    """Check a plan; returns its tasks in dependency order (stable for independent tasks).

    `completed` are the tasks already done in an earlier version of the plan: they are
    immutable, so a replan may leave them out (they are kept) but may not change them.

    Raises:
        PlanError: empty or over 20 tasks, a bad or duplicate id, an unknown profile, a
        self-dependency, an unknown dependency, a cycle, or a change to a completed task.
    """
    items = list(tasks)
    done = dict(completed or {})
    if not items:
        raise PlanError("a plan needs at least one task")
    total = len(items) + sum(1 for t in done if t not in {i.id for i in items})
    if total > max_tasks:
        raise PlanError(f"a plan has at most {max_tasks} tasks; this one has {total}")
    seen: set[str] = set()
    for task in items:
        _check_task(task, profiles, seen, done)
        seen.add(task.id)
    known = seen | set(done)
    for task in items:
        for dep in task.depends_on:
            if dep == task.id:
                raise PlanError(f"task {task.id!r} depends on itself")
            if dep not in known:
                raise PlanError(f"task {task.id!r} depends on unknown task {dep!r}")
    return topological_order(items, satisfied=set(done))


def _check_task(
    task: TaskSpec, profiles: Mapping[str, Profile], seen: set[str], done: Mapping[str, TaskSpec]
) -> None:
    if not _ID.match(task.id):
        raise PlanError(f"task id {task.id!r} must be letters, digits, '_', '-' or '.'")
    if task.id in seen:
        raise PlanError(f"task id {task.id!r} is used twice")
    if task.id in done and done[task.id] != task:
        raise PlanError(f"task {task.id!r} is completed and cannot be changed")
    if task.profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise PlanError(f"task {task.id!r}: unknown profile {task.profile!r} (known: {known})")


def topological_order(items: list[TaskSpec], *, satisfied: set[str]) -> list[TaskSpec]:
    """Kahn's algorithm, keeping the given order among tasks that are ready together.

    Raises:
        PlanError: the dependencies form a cycle (the message names it).
    """
    placed = set(satisfied)
    order: list[TaskSpec] = []
    remaining = list(items)
    while remaining:
        ready = [t for t in remaining if all(d in placed for d in t.depends_on)]
        if not ready:
            raise PlanError(f"the dependencies form a cycle: {_cycle(remaining)}")
        order.extend(ready)
        placed.update(t.id for t in ready)
        remaining = [t for t in remaining if t.id not in placed]
    return order


def _cycle(items: list[TaskSpec]) -> str:
    """One cycle among tasks that are all blocked, as `a → b → a`."""
    deps = {t.id: [d for d in t.depends_on if d in {i.id for i in items}] for t in items}
    path: list[str] = []
    node = items[0].id
    while node not in path:
        path.append(node)
        node = deps[node][0]
    cycle = [*path[path.index(node) :], node]
    return " → ".join(cycle)
