"""Builders for the coordinator tests: tasks, plans and interrupts of the wire protocol."""

from __future__ import annotations

from typing import Any

from sidecar.protocol import (
    EscalationInterrupt,
    PlanApprovalInterrupt,
    PlanInfo,
    PlanTaskSpec,
    TaskInfo,
)


def task(task_id: str = "a", status: str = "pending", **fields: Any) -> TaskInfo:
    base: dict[str, Any] = {
        "plan_id": "p1", "id": task_id, "title": f"Task {task_id}", "objective": "do it",
        "profile": "writer", "depends_on": (), "success_criteria": "", "status": status,
        "attempt": 0,
    }  # fmt: skip
    return TaskInfo.model_validate(base | fields)


def plan(
    *tasks: TaskInfo,
    plan_id: str = "p1",
    status: str = "running",
    thread_id: str = "t1",
    created_at: float = 1.0,
) -> PlanInfo:
    return PlanInfo.model_validate(
        {"id": plan_id, "thread_id": thread_id, "goal": "Write", "version": 1, "status": status,
         "created_at": created_at, "tasks": tasks}
    )  # fmt: skip


def plan_approval(
    interrupt_id: str = "ip", profiles: tuple[str, ...] = ("writer", "coder")
) -> PlanApprovalInterrupt:
    """A proposal of a → b → c (b and c depend on the task before)."""
    specs = (
        PlanTaskSpec(id="a", title="Outline", objective="Outline it", profile="writer"),
        PlanTaskSpec(id="b", title="Draft", objective="Draft it", profile="coder",
                     depends_on=("a",)),
        PlanTaskSpec(id="c", title="Review", objective="Review it", profile="writer",
                     depends_on=("b",), success_criteria="no typos"),
    )  # fmt: skip
    return PlanApprovalInterrupt(
        id=interrupt_id, title="Plan", body="", plan_id="p1", version=1, goal="Write",
        tasks=specs, profiles=profiles,
    )  # fmt: skip


def escalation(interrupt_id: str = "ie", **fields: Any) -> EscalationInterrupt:
    base: dict[str, Any] = {
        "id": interrupt_id, "title": "Task a stalled", "body": "", "task_id": "a",
        "plan_id": "p1", "reason": "stalled", "attempts": 2, "error": "no event for 320 s",
        "profiles": ("writer", "coder"),
    }  # fmt: skip
    return EscalationInterrupt.model_validate(base | fields)
