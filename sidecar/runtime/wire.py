"""Store records and a turn's typed events → wire models, each in one place."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import TypeAdapter

from sidecar.protocol import (
    ANNOUNCEMENT_PREFIX,
    BudgetEvent,
    BudgetInfo,
    CompactionInfo,
    ContextEvent,
    ContextItemInfo,
    InterruptInfo,
    MemoryEvent,
    MemoryInfo,
    MessageEvent,
    MessageInfo,
    PlanInfo,
    PlanUpdate,
    RunEventBody,
    SubagentEvent,
    TaskInfo,
    TaskUpdate,
    ThreadInfo,
    Token,
    ToolCall,
    ToolCallInfo,
    ToolProgress,
    ToolResult,
    TurnUsageEvent,
)
from sidecar.protocol import NodeFinished as NodeFinishedEvent
from sidecar.protocol import NodeStarted as NodeStartedEvent
from sidecar.store import InterruptRecord, MessageRecord, TaskRecord, ThreadRecord
from sidecar.store.budgets import Budget
from sidecar.turn.events import (
    BudgetReported,
    ContextReported,
    MemoryChanged,
    MessageWritten,
    NodeFinished,
    NodeStarted,
    PlanChanged,
    SubagentActivity,
    SubagentRelayed,
    TaskChanged,
    TaskChecked,
    TokenStreamed,
    ToolCalled,
    ToolFinished,
    ToolProgressed,
    TurnEvent,
    TurnUsageReported,
    UsageCounted,
)

_INTERRUPT = TypeAdapter[InterruptInfo](InterruptInfo)
_THREAD_STATUSES = {"idle", "running", "interrupted", "failed", "cancelled"}


def thread_info(record: ThreadRecord) -> ThreadInfo:
    status = record.status if record.status in _THREAD_STATUSES else "idle"
    return ThreadInfo(
        id=record.id,
        title=record.title,
        status=status,  # pyright: ignore[reportArgumentType]
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def message_info(record: MessageRecord) -> MessageInfo:
    return MessageInfo(
        id=record.id,
        thread_id=record.thread_id,
        role=record.role,  # pyright: ignore[reportArgumentType]
        content=record.content,
        created_at=record.created_at,
        tool_calls=tuple(
            ToolCallInfo(id=c.id, server=c.server, tool=c.tool, arguments=c.arguments)
            for c in record.tool_calls
        ),
        tool_call_id=record.tool_call_id,
        is_error=record.is_error,
        announcement=record.role == "user" and record.content.startswith(ANNOUNCEMENT_PREFIX),
    )


def interrupt_info(record: InterruptRecord) -> InterruptInfo:
    return interrupt_from_payload(record.id, record.run_id, record.payload)


def interrupt_from_payload(
    interrupt_id: str, run_id: str | None, payload: dict[str, Any]
) -> InterruptInfo:
    return _INTERRUPT.validate_python({**payload, "id": interrupt_id, "run_id": run_id})


def task_info(task: TaskRecord) -> TaskInfo:
    return TaskInfo(
        plan_id=task.plan_id,
        id=task.id,
        title=task.title,
        objective=task.objective,
        profile=task.profile,
        depends_on=tuple(task.depends_on),
        success_criteria=task.success_criteria,
        optional=task.optional,
        status=task.status,  # pyright: ignore[reportArgumentType]
        attempt=task.attempt,
        activity=task.activity,
        stalled=task.stalled,
        started_at=task.started_at,
        finished_at=task.finished_at,
        last_event_at=task.last_event_at,
        tokens_in=task.tokens_in,
        tokens_out=task.tokens_out,
        cost=task.cost,
        sub_thread_id=task.sub_thread_id,
        session_ref=task.session_ref,
        summary=task.summary,
        error=task.error,
    )


def plan_info(snapshot: PlanChanged) -> PlanInfo:
    plan, budget = snapshot.plan, snapshot.budget
    limits: dict[str, object] = {}
    if budget is not None:
        limits = {
            "budget_tokens": budget.budget_tokens,
            "budget_cost": budget.budget_cost,
            "spent_tokens": budget.spent_tokens,
            "spent_cost": budget.spent_cost,
            "remaining_tokens": budget.remaining_tokens,
            "remaining_cost": budget.remaining_cost,
            "budget_warned": budget.warned,
            "cost_unknown": budget.cost_unknown,
        }
    return PlanInfo.model_validate(
        {
            "id": plan.id,
            "thread_id": plan.thread_id,
            "goal": plan.goal,
            "version": plan.version,
            "status": plan.status,
            "created_at": plan.created_at,
            "tasks": tuple(task_info(t) for t in snapshot.tasks),
            "replaced": tuple(
                {"version": version, "task": task_info(t)} for version, t in snapshot.replaced
            ),
            **limits,
        }
    )


def budget_info(budget: Budget) -> BudgetInfo:
    return BudgetInfo(
        budget_tokens=budget.budget_tokens,
        budget_cost=budget.budget_cost,
        spent_tokens=budget.spent_tokens,
        spent_cost=budget.spent_cost,
        remaining_tokens=budget.remaining_tokens,
        remaining_cost=budget.remaining_cost,
        warned=budget.warned,
        cost_unknown=budget.cost_unknown,
    )


def graph_event(event: TurnEvent) -> RunEventBody | None:
    """A turn's event as its wire event; None for what stays inside the sidecar (usage).

    Raises:
        pydantic.ValidationError: a value the protocol refuses (a task status it does not know).
    """
    if isinstance(event, UsageCounted):
        return None
    return _body(event)


def _body(event: TurnEvent) -> RunEventBody:  # noqa: PLR0912 (one case per event kind)
    match event:
        case NodeStarted(node):
            return NodeStartedEvent(node=node)
        case NodeFinished(node):
            return NodeFinishedEvent(node=node)
        case TokenStreamed(text):
            return Token(text=text)
        case MessageWritten(record):
            return MessageEvent(message=message_info(record))
        case ToolCalled(call_id, server, tool, arguments):
            return ToolCall(call_id=call_id, server=server, tool=tool, arguments=dict(arguments))
        case ToolProgressed(call_id, progress, total, message):
            return ToolProgress(call_id=call_id, progress=progress, total=total, message=message)
        case ToolFinished(call_id, is_error, content):
            return ToolResult(call_id=call_id, is_error=is_error, content=content)
        case TaskChanged(task):
            return TaskUpdate(task=task_info(task))
        case PlanChanged():
            return PlanUpdate(plan=plan_info(event))
        case BudgetReported(scope, state, budget, message, plan_id):
            info = budget_info(budget)
            return BudgetEvent(
                scope=scope, state=state, plan_id=plan_id, budget=info, message=message
            )
        case ContextReported():
            return _context(event)
        case MemoryChanged(action, key, memory, error):
            info = MemoryInfo.model_validate(memory.to_dict()) if memory is not None else None
            return MemoryEvent(action=action, key=key, memory=info, error=error)
        case TurnUsageReported():
            return TurnUsageEvent(
                model=event.model,
                prompt_tokens=event.prompt_tokens,
                completion_tokens=event.completion_tokens,
                cost=event.cost,
                thread_prompt_tokens=event.thread_prompt_tokens,
                thread_completion_tokens=event.thread_completion_tokens,
                thread_cost=event.thread_cost,
            )
        case SubagentRelayed(task_id, activity, plan_id, sub_thread_id):
            return SubagentEvent(
                task_id=task_id,
                plan_id=plan_id,
                sub_thread_id=sub_thread_id,
                event=_nested(activity),
            )
        case UsageCounted():
            raise TypeError("usage is counted inside the sidecar, never sent")


def _context(event: ContextReported) -> ContextEvent:
    compaction = event.compaction
    return ContextEvent(
        model=event.model,
        window=event.window,
        budget=event.budget,
        used=event.used,
        tokenizer=event.tokenizer,
        items=tuple(
            ContextItemInfo(
                kind=i.kind,
                label=i.label,
                tokens=i.tokens,
                included=i.included,
                reason=i.reason,
                ref=i.ref,
            )
            for i in event.items
        ),
        left_out_messages=event.left_out_messages,
        warnings=event.warnings,
        compaction=None if compaction is None else CompactionInfo(**asdict(compaction)),
        message_id=event.message_id,
        tools_sent=event.tools_sent,
        tools_deferred=event.tools_deferred,
    )


def _nested(activity: SubagentActivity) -> dict[str, Any]:
    """A subagent's event as the wire nests it under its task (`SubagentEvent.event`)."""
    if isinstance(activity, TaskChecked):
        return {"type": "check", **asdict(activity)}
    return _body(activity).model_dump(mode="json")
