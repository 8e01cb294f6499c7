"""The main agent manages its team: the status of its plans, a task's full result, a message to
a running task, and cancelling a task or a plan (revising a plan is `atrium__plan` with its
`plan_id`).

These are the author's agent's own tools (like `atrium__delegate`), answered here from the
store and the coordinator; none reaches a server. A task's result is read from its final
envelope in the outbox, whole and paged: nothing is cut. A message to a running task is an
envelope addressed to it (`reply_to` the call that sent it); an internal subagent reads it
before its next step (`take_messages`). Claude Code takes it through its stream-json input as
its next turn (the agents server's `agent_message`, to the run working on the task); Codex and
OpenClaw take no input while they run, so a message to one is refused with the way on: cancel
it and run the task again with the message.
"""

from __future__ import annotations

from typing import Any

from sidecar.host.types import ToolOutcome
from sidecar.llm.types import ToolSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.envelope import agent_id
from sidecar.plans.profiles import AGENTS_SERVER, Profile
from sidecar.plans.records import full_result
from sidecar.store import Store, TaskRecord
from sidecar.turn.state import ChatEntry, ToolCallEntry

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
    store = deps.store
    task = _task(store, thread_id, arguments)
    text = _required(arguments, "text")
    if task.final:
        raise _Refused(f"task {task.id} has ended ({task.status}); it reads no more messages")
    profile: Profile | None = deps.profiles().get(task.profile)
    if profile is None:
        raise _Refused(f"task {task.id}'s profile {task.profile!r} is not configured")
    if profile.kind == "claude_code":
        return await _to_claude(deps, thread_id, call, task, text)
    if profile.kind != "internal":
        raise _Refused(
            f"task {task.id} runs {profile.name}, whose CLI takes no input while it works. To "
            f"change course, {_WAY_ON.format(task=task.id, plan=task.plan_id)}"
        )
    store.put_envelope(
        f"{call['id']}:message",
        thread_id,
        sender=agent_id(thread_id),
        receiver=agent_id(thread_id, task.id),
        kind="message",
        payload={"text": text},
        plan_id=task.plan_id,
        task_id=task.id,
        reply_to=call["id"],
    )
    return f"Sent to task {task.id}: it reads your message before its next step."


_WAY_ON = (
    f"cancel it ({TASK_CANCEL_TOOL}) and revise the plan (atrium__plan with "
    "plan_id={plan!r}) with a task that includes your message."
)


async def _to_claude(
    deps: PlanDeps, thread_id: str, call: ToolCallEntry, task: TaskRecord, text: str
) -> str:
    """Claude Code takes a message through its stream-json input, as its next turn."""
    run_id = deps.coordinator.agent_run(task.plan_id, task.id)
    if run_id is None:
        raise _Refused(
            f"task {task.id} has no Claude Code run going right now ({task.status}); send it "
            f"once it runs, or {_WAY_ON.format(task=task.id, plan=task.plan_id)}"
        )
    sent = await deps.host.call(
        f"{AGENTS_SERVER}__agent_message", {"run_id": run_id, "text": text}, None
    )
    if sent.is_error:
        raise _Refused(f"Claude Code did not take the message: {sent.text}")
    store = deps.store
    with store.transaction():
        envelope_id = f"{call['id']}:message"
        store.put_envelope(
            envelope_id,
            thread_id,
            sender=agent_id(thread_id),
            receiver=agent_id(thread_id, task.id),
            kind="message",
            payload={"text": text, "delivery": "stdin"},
            plan_id=task.plan_id,
            task_id=task.id,
            reply_to=call["id"],
        )
        store.ack_envelope(envelope_id)  # delivered: the agents server wrote it to the CLI
    return (
        f"Sent to task {task.id}: Claude Code takes your message as its next turn, once the "
        "turn it is in ends."
    )


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


def take_messages(deps: PlanDeps, parent_thread_id: str, task_id: str, sub: str) -> list[ChatEntry]:
    """The messages sent to a running internal subagent's task, delivered now: written to its
    sub-thread's conversation and acknowledged in one transaction (a crash in between delivers
    them once, on the step after)."""
    store = deps.store
    waiting = store.envelopes_for(agent_id(parent_thread_id, task_id))
    if not waiting:
        return []
    entries: list[ChatEntry] = []
    with store.transaction():
        for envelope in waiting:
            text = f"[Message from the main agent] {envelope.payload.get('text', '')}"
            store.add_message(sub, "user", text, message_id=f"envelope:{envelope.id}")
            store.ack_envelope(envelope.id)
            entries.append({"role": "user", "content": text})
    return entries
