"""context: load the turn's slice of the conversation of record into state.

Earlier turns contribute their author and assistant text only; their tool traffic stays in the
transcript. The slice is bounded, so a turn costs the same at message 10 and message 10,000.
"""

from __future__ import annotations

from typing import Any

from sidecar.graph.deps import GraphDeps
from sidecar.graph.state import RESET, TurnState


def make_context(deps: GraphDeps):
    async def context(state: TurnState) -> dict[str, Any]:
        records = deps.store.recent_messages(state["thread_id"], deps.context_messages)
        turns = [
            {"role": r.role, "content": r.content}
            for r in records
            if r.role in ("user", "assistant") and r.content and not r.tool_calls
        ]
        note = _open_plan_note(deps, state["thread_id"])
        return {
            "context": turns + ([note] if note else []),
            "scratch": RESET,
            "pending": [],
            "answer": None,
        }

    return context


_OPEN_PLAN_STATES = frozenset({"failed", "aborted"})


def _open_plan_note(deps: GraphDeps, thread_id: str) -> dict[str, Any] | None:
    """The thread's latest plan, if it ended unfinished: the author's new message is the
    trigger on which the planner may revise it (completed tasks stay as they are)."""
    plans = deps.store.plans(thread_id)
    if not plans or plans[-1].status not in _OPEN_PLAN_STATES:
        return None
    plan = plans[-1]
    lines = [f"Plan {plan.id} (version {plan.version}, goal: {plan.goal}) ended {plan.status}:"]
    for task in deps.store.tasks(plan.id):
        detail = f": {task.error}" if task.error else ""
        lines.append(f"- {task.id} ({task.title}, profile {task.profile}): {task.status}{detail}")
    lines.append(
        f"If the author's message asks to go on, revise it with atrium__plan and "
        f"plan_id={plan.id!r}; completed tasks are kept and cannot change."
    )
    return {"role": "system", "content": "\n".join(lines)}
