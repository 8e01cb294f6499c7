"""The main agent manages its team: the status of its plans, a task's full result, a message to
a running task, and cancelling a task or a plan (revising a plan is `atrium__plan` with its
`plan_id`).

These are the author's agent's own tools (like `atrium__delegate`), answered here from the
store and the coordinator; none reaches a server. A task's result is read from its final
envelope in the outbox, whole and paged: nothing is cut. A message to a running task is an
envelope addressed to it, delivered as `sidecar.plans.task_messages` says (the author sends
them the same way from the run tree).
"""

from __future__ import annotations

from typing import Any

from sidecar.host.types import ToolOutcome
from sidecar.llm.types import ToolSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.records import full_result
from sidecar.plans.task_messages import MessageRefused, send_to_task
from sidecar.store import Store, TaskRecord
from sidecar.turn.state import ToolCallEntry

TEAM_STATUS_TOOL = "atrium__team_status"
TASK_RESULT_TOOL = "atrium__task_result"
TASK_MESSAGE_TOOL = "atrium__task_message"
TASK_CANCEL_TOOL = "atrium__task_cancel"
TEAM_TOOLS = frozenset({TEAM_STATUS_TOOL, TASK_RESULT_TOOL, TASK_MESSAGE_TOOL, TASK_CANCEL_TOOL})

PAGE = 8000
"""Characters of a task's result per page of `atrium__task_result`."""
MAX_PAGE = 50_000
_SUMMARY = 200

_ID = {"type": "string"}


def team_specs() -> list[ToolSpec]:
    """The team tools as the model sees them."""
    return [
        ToolSpec(
            TEAM_STATUS_TOOL,
            "The plans you handed off in this conversation and their tasks: status, what each "
            "is doing, and the start of each result. Pass plan_id for one plan.",
            {"type": "object", "properties": {"plan_id": _ID}},
        ),
        ToolSpec(
            TASK_RESULT_TOOL,
            f"A task's full result, {PAGE} characters per page from `offset`; the answer says "
            "where the next page starts.",
            {
                "type": "object",
                "properties": {
                    "plan_id": _ID,
                    "task_id": _ID,
                    "offset": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                },
                "required": ["plan_id", "task_id"],
            },
        ),
        ToolSpec(
            TASK_MESSAGE_TOOL,
            "Tell a running task something (a correction, a new detail): a subagent reads it "
            "before its next step.",
            {
                "type": "object",
                "properties": {"plan_id": _ID, "task_id": _ID, "text": {"type": "string"}},
                "required": ["plan_id", "task_id", "text"],
            },
        ),
        ToolSpec(
            TASK_CANCEL_TOOL,
            "Cancel one task of a plan you handed off, or the whole plan (no task_id). "
            "Finished tasks keep their results.",
            {
                "type": "object",
                "properties": {"plan_id": _ID, "task_id": _ID},
                "required": ["plan_id"],
            },
        ),
    ]


class _Refused(Exception):
    """The call cannot be done; its message is the tool's error result."""


async def team_call(deps: PlanDeps, thread_id: str, call: ToolCallEntry) -> ToolOutcome:
    """Answer a team tool's call for the agent of `thread_id`."""
    arguments: dict[str, Any] = dict(call["arguments"])
    try:
        match call["name"]:
            case "atrium__team_status":
                text = _status(deps.store, thread_id, _optional(arguments, "plan_id"))
            case "atrium__task_result":
                text = _result(deps.store, _task(deps.store, thread_id, arguments), arguments)
            case "atrium__task_message":
                text = await _message(deps, thread_id, call, arguments)
            case "atrium__task_cancel":
                text = _cancel(deps, thread_id, arguments)
            case name:
                raise _Refused(f"{name} is not a team tool")
    except _Refused as exc:
        return ToolOutcome(is_error=True, text=str(exc))
    return ToolOutcome(is_error=False, text=text)


def _optional(arguments: dict[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    return value if isinstance(value, str) and value else None


def _required(arguments: dict[str, Any], name: str) -> str:
    value = _optional(arguments, name)
    if value is None:
        raise _Refused(f"{name} is required")
    return value


def _plan_of(store: Store, thread_id: str, plan_id: str) -> None:
    plan = store.get_plan(plan_id)
    if plan is None or plan.thread_id != thread_id:
        raise _Refused(f"no plan {plan_id!r} in this conversation (see {TEAM_STATUS_TOOL})")


def _task(store: Store, thread_id: str, arguments: dict[str, Any]) -> TaskRecord:
    plan_id, task_id = _required(arguments, "plan_id"), _required(arguments, "task_id")
    _plan_of(store, thread_id, plan_id)
    task = store.get_task(plan_id, task_id)
    if task is None:
        raise _Refused(f"plan {plan_id!r} has no task {task_id!r}")
    return task


def _status(store: Store, thread_id: str, plan_id: str | None) -> str:
    if plan_id is not None:
        _plan_of(store, thread_id, plan_id)
    plans = [p for p in store.plans(thread_id) if plan_id is None or p.id == plan_id]
    if not plans:
        return "You have handed off no plans in this conversation."
    lines: list[str] = []
    for plan in plans:
        lines.append(f"Plan {plan.id} ({plan.status}): {plan.goal}")
        for task in store.tasks(plan.id):
            doing = f"; {task.activity}" if task.activity and not task.final else ""
            lines.append(f"- {task.id} [{task.status}{doing}] {task.title} ({task.profile})")
            if task.summary:
                more = "…" if len(task.summary) > _SUMMARY else ""
                lines.append(f"  Result: {task.summary[:_SUMMARY]}{more}")
            if task.error:
                lines.append(f"  Error: {task.error}")
    return "\n".join(lines)


def _result(store: Store, task: TaskRecord, arguments: dict[str, Any]) -> str:
    text = full_result(store, task)
    offset = arguments.get("offset", 0)
    limit = arguments.get("limit", PAGE)
    if not isinstance(offset, int) or offset < 0:
        raise _Refused("offset must be a whole number from 0")
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise _Refused(f"limit must be a whole number from 1 to {MAX_PAGE}")
    if not text:
        return f"Task {task.id} ({task.status}) has no result yet."
    page = text[offset : offset + limit]
    end = offset + len(page)
    tail = (
        f"[characters {offset}-{end} of {len(text)}; the next page starts at offset {end}]"
        if end < len(text)
        else f"[characters {offset}-{end} of {len(text)}: the end]"
    )
    return f"{page}\n{tail}"


async def _message(
    deps: PlanDeps, thread_id: str, call: ToolCallEntry, arguments: dict[str, Any]
) -> str:
    task = _task(deps.store, thread_id, arguments)
    text = _required(arguments, "text")
    try:
        return await send_to_task(
            deps, thread_id, task, text, message_id=call["id"], sender="main agent"
        )
    except MessageRefused as exc:
        raise _Refused(str(exc)) from exc


def _cancel(deps: PlanDeps, thread_id: str, arguments: dict[str, Any]) -> str:
    store = deps.store
    plan_id = _required(arguments, "plan_id")
    _plan_of(store, thread_id, plan_id)
    task_id = _optional(arguments, "task_id")
    plan = store.get_plan(plan_id)
    if task_id is None and plan is not None and plan.status == "paused":
        # Nothing runs it: its open tasks end here and now.
        with store.transaction():
            for task in store.tasks(plan_id):
                if not task.final:
                    store.update_task_from(task, status="cancelled", error=CANCELLED_BY_AGENT)
            store.set_plan_status(plan_id, "aborted")
        return f"Plan {plan_id} (paused) is cancelled; finished tasks keep their results."
    if task_id is None:
        deps.coordinator.abort_plan(plan_id)
        return f"Plan {plan_id} is being cancelled; finished tasks keep their results."
    task = _task(store, thread_id, arguments)
    if task.final:
        return f"Task {task.id} had already ended ({task.status})."
    if not deps.coordinator.cancel_task(plan_id, task.id):
        deps.coordinator.cancel_pending(plan_id, task.id)
    return f"Task {task.id} is being cancelled."


CANCELLED_BY_AGENT = "cancelled by the main agent"
