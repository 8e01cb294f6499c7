"""Ending a task: its result goes to the durable outbox first, then its state changes."""

from __future__ import annotations

import time

from sidecar.plans.attempt import AttemptResult
from sidecar.plans.deps import PlanDeps
from sidecar.plans.records import change_task, post_envelope
from sidecar.store import TaskRecord
from sidecar.turn.state import SubagentInput


def finish_task(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    status: str,
    *,
    error: str | None = None,
    result: AttemptResult | None = None,
) -> None:
    """End the task: its final (or error) envelope goes to the outbox first, then the state."""
    store = deps.store
    result = result or AttemptResult(status="failed", error=error)
    stats = {
        "duration_s": 0.0 if task.started_at is None else round(time.time() - task.started_at, 3),
        "tokens_in": task.tokens_in,
        "tokens_out": task.tokens_out,
        "cost": task.cost,
        "attempts": task.attempt,
    }
    payload = {
        "status": status,
        "title": task.title,
        "findings": result.summary,
        "error": error,
        "stats": stats,
        "session_ref": result.session_ref,
        "traces": dict(result.traces),
    }
    kind = "final" if status in ("succeeded", "skipped") else "error"
    post_envelope(
        store, task, inp["thread_id"], kind=kind, payload=payload, artifacts=result.artifacts
    )
    change_task(
        store,
        task.plan_id,
        task.id,
        status=status,
        finished_at=time.time(),
        summary=(result.summary or "")[:4000] or None,
        error=error,
        activity=None,
        session_ref=result.session_ref or task.session_ref,
    )
    deps.coordinator.notify(task.plan_id)
