"""The planner's two ways to hand work on: delegate independent tasks (they run at once) or
propose a plan (a DAG the author approves unless the thread is autonomous)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from sidecar.llm.types import ToolSpec
from sidecar.plans.dag import PlanError, TaskSpec, parse_tasks
from sidecar.turn.state import ToolCallEntry

DELEGATE = "atrium__delegate"
PLAN = "atrium__plan"
DISPATCH_TOOLS = frozenset({DELEGATE, PLAN})

_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Short unique id, e.g. 'draft'."},
        "title": {"type": "string"},
        "objective": {"type": "string", "description": "Everything the subagent must know."},
        "profile": {"type": "string"},
        "depends_on": {"type": "array", "items": {"type": "string"}},
        "success_criteria": {
            "type": "string",
            "description": "What a checker verifies before the task counts as done: prose for "
            "a verifier, or 'run: <python>' (exit code 0 passes) run in the sandbox.",
        },
        "writes": {
            "type": "boolean",
            "description": "True when the task changes files: it goes to a profile that may "
            "write (a read-only one is replaced by the best that may).",
        },
        "optional": {
            "type": "boolean",
            "description": "Nice to have, not needed for the goal: skipped if the plan's "
            "token budget is 80% spent before it starts.",
        },
    },
    "required": ["id", "title", "objective", "profile"],
}


def dispatch_specs(profiles: dict[str, str]) -> list[ToolSpec]:
    """The tool specs, describing the profiles the planner may choose from (id → its roster
    line: `id: name (kind; reach; model; tools; availability)`)."""
    known = "; ".join(line for _pid, line in sorted(profiles.items()))
    delegate = ToolSpec(
        name=DELEGATE,
        description=(
            "Hand one or more (up to 64) independent tasks to subagents, which run in "
            "parallel, each knowing only its task. Returns each task's status, findings, "
            "changed files and "
            f"stats. Give a task that changes files a profile that may write. Profiles: {known}."
        ),
        input_schema={
            "type": "object",
            "properties": {"tasks": {"type": "array", "items": _TASK_SCHEMA, "minItems": 1}},
            "required": ["tasks"],
        },
    )
    plan = ToolSpec(
        name=PLAN,
        description=(
            "Propose a plan: up to 20 tasks with dependencies (depends_on), run in dependency "
            "order, in parallel where possible, after the author approves. To revise a plan "
            "after a failure, pass its plan_id: completed tasks are kept and cannot change. "
            f"Profiles: {known}."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "goal": {"type": "string"},
                "tasks": {"type": "array", "items": _TASK_SCHEMA, "minItems": 1},
                "plan_id": {"type": "string"},
                "budget_tokens": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Optional token budget for the whole plan.",
                },
                "budget_cost": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Optional cost budget for the whole plan, in USD.",
                },
            },
            "required": ["goal", "tasks"],
        },
    )
    return [delegate, plan]


@dataclass(frozen=True, slots=True)
class PlanRequest:
    goal: str
    tasks: list[TaskSpec]
    needs_approval: bool
    replan_of: str | None


def plan_request(call: ToolCallEntry) -> PlanRequest:
    """Raises:
    PlanError: the arguments do not describe tasks."""
    args = cast(dict[str, Any], call.get("arguments") or {})
    tasks = parse_tasks(args.get("tasks"))
    if call["name"] == DELEGATE:
        goal = "; ".join(t.title for t in tasks)
        return PlanRequest(goal, tasks, needs_approval=False, replan_of=None)
    goal = args.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise PlanError("a plan needs a non-empty 'goal'")
    replan = args.get("plan_id")
    return PlanRequest(goal.strip(), tasks, True, replan if isinstance(replan, str) else None)


def delegate_arguments(profile: str, text: str) -> dict[str, Any]:
    """`/delegate <profile> <task>` as the delegate tool's arguments."""
    title = text.strip().splitlines()[0][:80]
    return {"tasks": [{"id": "task", "title": title, "objective": text, "profile": profile}]}


def plan_arguments(raw: str) -> dict[str, Any]:
    """`/plan <json>`: an object with goal and tasks, or a bare list of tasks.

    Raises:
        PlanError: not JSON of that shape.
    """
    try:
        data: object = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise PlanError(f"/plan needs JSON ({exc.msg})") from exc
    if isinstance(data, list):
        return {"goal": "plan", "tasks": data}
    if not isinstance(data, dict):
        raise PlanError('/plan needs {"goal": ..., "tasks": [...]} or a list of tasks')
    return cast(dict[str, Any], data)
