"""Tasks and plans as the graph reports them, and the envelopes subagents leave behind."""

from __future__ import annotations

import time
from typing import Any

from sidecar.plans.envelope import Envelope, EnvelopeKind, agent_id
from sidecar.plans.shapes import plan_snapshot
from sidecar.store import Store, TaskRecord
from sidecar.turn.events import TaskChanged, emit


def emit_task(task: TaskRecord) -> None:
    emit(TaskChanged(task))


def emit_plan(store: Store, plan_id: str) -> None:
    plan = store.get_plan(plan_id)
    if plan is not None:
        emit(plan_snapshot(store, plan))


def change_task(store: Store, plan_id: str, task_id: str, **changes: object) -> TaskRecord | None:
    """Apply `changes` to the task unless someone else ended it first (compare-and-set on its
    version; a lost race re-reads and gives way to a final state). Emits the new state."""
    while True:
        current = store.get_task(plan_id, task_id)
        if current is None or current.final:
            return None
        updated = store.update_task_from(current, **changes)
        if updated is not None:
            emit_task(updated)
            return updated


def post_envelope(
    store: Store,
    task: TaskRecord,
    thread_id: str,
    *,
    kind: EnvelopeKind,
    payload: dict[str, Any],
    artifacts: tuple[str, ...] = (),
) -> Envelope:
    """Write a subagent's envelope to the durable outbox before anyone consumes it."""
    envelope = Envelope(
        thread_id=thread_id,
        sender=agent_id(thread_id, task.id),
        receiver=agent_id(thread_id),
        kind=kind,
        payload=payload,
        artifacts=artifacts,
        id=f"{task.plan_id}:{task.id}:{kind}:{task.attempt}",
        created_at=time.time(),
    )
    store.put_envelope(
        envelope.id,
        thread_id,
        sender=envelope.sender,
        receiver=envelope.receiver,
        kind=envelope.kind,
        payload=envelope.payload,
        plan_id=task.plan_id,
        task_id=task.id,
        artifacts=envelope.artifacts,
        created_at=envelope.created_at,
    )
    return envelope


def task_prompt(store: Store, task: TaskRecord) -> str:
    """The whole of what a subagent is told: its task and what its dependencies produced."""
    lines = [f"Task: {task.title}", "", task.objective]
    if task.success_criteria:
        lines += ["", f"Done when: {task.success_criteria}"]
    for dep_id in task.depends_on:
        dep = store.get_task(task.plan_id, dep_id)
        if dep is None:
            continue
        result = full_result(store, dep)
        lines += ["", f"Result of task {dep.id} ({dep.title}, {dep.status}):", result]
        artifacts = _artifacts_of(store, dep)
        if artifacts:
            lines.append("Files it changed: " + ", ".join(artifacts))
    lines += ["", "Work on this task only, then answer with its result."]
    return "\n".join(lines)


def full_result(store: Store, task: TaskRecord) -> str:
    """The task's whole result: its final envelope's findings, never cut (its summary, the
    first 4,000 characters, until it has one)."""
    for envelope in reversed(store.envelopes_of_task(task.plan_id, task.id)):
        if envelope.kind in ("final", "error"):
            findings = envelope.payload.get("findings")
            if isinstance(findings, str) and findings:
                return findings
    return task.summary or ""


def _artifacts_of(store: Store, task: TaskRecord) -> list[str]:
    plan = store.get_plan(task.plan_id)
    if plan is None:
        return []
    found: list[str] = []
    for envelope in store.envelopes(plan.thread_id):
        if envelope.task_id == task.id and envelope.kind == "final":
            found.extend(envelope.artifacts)
    return found
