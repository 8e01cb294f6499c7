"""How a plan ended, in a word and in the report its caller reads.

The report is what the planner sees when a plan ends: per task its status, findings, files and
stats from the outbox (the full findings, never cut), and how to revise the plan when some task
did not succeed. The dispatch join (a subagent's own plan) and the background desk (the author's
thread) both end plans with it.
"""

from __future__ import annotations

from sidecar.store import PlanRecord, Store, TaskRecord

TASK_WRONG_MARK = "The checker says the task itself is wrong"
"""How a task's error begins when its checker found the task itself wrong
(`sidecar.plans.verify.TASK_WRONG`)."""

RESUMED = "resumed"
"""The payload key of the observation that says how a task a restart or a pause left running
was taken up (`sidecar.plans.runner`)."""

_DONE = frozenset({"succeeded", "skipped"})


def plan_outcome(tasks: list[TaskRecord], *, aborted: bool) -> str:
    """`aborted` (the author stopped it), `completed` (every task succeeded or was skipped) or
    `failed`."""
    if aborted:
        return "aborted"
    if all(t.status in _DONE for t in tasks):
        return "completed"
    return "failed"


def plan_report(store: Store, plan: PlanRecord, status: str, tasks: list[TaskRecord]) -> str:
    """Per task its status, findings, files and stats, from the outbox."""
    plan_id = plan.id
    envelopes = [e for e in store.envelopes(plan.thread_id) if e.plan_id == plan_id]
    finals = {e.task_id: e for e in envelopes if e.kind in ("final", "error")}
    resumed: dict[str | None, list[str]] = {}
    for e in envelopes:
        if e.kind == "observation" and isinstance(how := e.payload.get(RESUMED), str):
            resumed.setdefault(e.task_id, []).append(how)
    lines = [f"Plan {plan_id}: {status}.", f"Goal: {plan.goal}"]
    for task in tasks:
        envelope = finals.get(task.id)
        payload = envelope.payload if envelope is not None else {}
        stats = payload.get("stats", {})
        lines.append(
            f"- [{task.status}] {task.id} ({task.title}); profile {task.profile}; "
            f"{stats.get('attempts', task.attempt)} attempt(s), {stats.get('duration_s', 0)} s, "
            f"tokens {task.tokens_in}/{task.tokens_out}, cost {task.cost:.4f}"
        )
        findings = payload.get("findings") if envelope is not None else None
        if findings or task.summary:
            lines.append(f"  Findings: {findings or task.summary}")
        if envelope is not None and envelope.artifacts:
            lines.append("  Files: " + ", ".join(envelope.artifacts))
        if task.error:
            lines.append(f"  Error: {task.error}")
        for how in resumed.get(task.id, ()):
            lines.append(f"  Taken up again (after a restart or a pause): {how}")
    replaced = store.replaced_tasks(plan_id)
    if replaced:
        lines.append("Replaced by a replan (kept for the record):")
        for version, task in replaced:
            why = f": {task.error}" if task.error else ""
            lines.append(f"- v{version} [{task.status}] {task.id} ({task.title}){why}")
    wrong = [t.id for t in tasks if t.error and t.error.startswith(TASK_WRONG_MARK)]
    if wrong:
        lines.append(
            f"The checker says task(s) {', '.join(wrong)} cannot be done as written: propose a "
            f"revised plan (atrium__plan with plan_id={plan_id!r}) that changes them."
        )
    if status == "failed":
        lines.append(
            f"Some tasks did not succeed. To revise the plan call atrium__plan with "
            f"plan_id={plan_id!r}; completed tasks are kept as they are."
        )
    return "\n".join(lines)
