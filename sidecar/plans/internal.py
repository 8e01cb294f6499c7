"""An `internal` subagent: the main graph's planner/tool loop on the task's own sub-thread,
with only its profile's tools, starting from nothing but its task.

The child graph runs in a fresh context (no parent LangGraph config leaks in, so it is a
separate checkpointed thread, not a nested namespace of the parent). Its events come back to
the parent's run as `subagent_event`s; its interrupts (approvals, questions) become live
interrupts of the parent's run, several of which may be pending at once across subagents.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from typing import TYPE_CHECKING, Any, cast

from sidecar.binding.calls import fresh_context
from sidecar.plans.attempt import (
    AttemptContext,
    AttemptReport,
    AttemptResult,
    BudgetExceededError,
    UsageSoFar,
)
from sidecar.plans.deps import PlanDeps
from sidecar.plans.records import change_task, task_prompt
from sidecar.store.records import question_id
from sidecar.turn.events import (
    NodeFinished,
    NodeStarted,
    TokenStreamed,
    ToolCalled,
    TurnEvent,
    UsageCounted,
)
from sidecar.turn.questions import Question

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

_PROMPTS = {
    "continue": "Continue the task where you left off, then answer with its result.",
    "retry": "Your previous attempt failed ({error}). Try the task again.",
    "revise": "{error}\n\nFix what the check found, then answer with the corrected result.",
}
_WRITES = ("write", "edit")
# What a task is doing, by the node its subagent entered (tool calls name the tool instead).
_ACTIVITIES = {"planner": "thinking"}


async def internal_attempt(deps: PlanDeps, ctx: AttemptContext) -> AttemptResult:
    graph, saver = deps.compiled.get()
    ctx.model = _model_name(deps, ctx)
    sub = _sub_thread(deps, ctx)
    config: RunnableConfig = {"configurable": {"thread_id": sub}}
    snapshot = await graph.aget_state(config)
    graph_input: Any
    if ctx.mode == "resume" and (snapshot.next or snapshot.interrupts):
        graph_input = None  # continue the turn a crash or cancel cut short
    else:
        if snapshot.next:
            await saver.adelete_thread(sub)
        graph_input = _new_turn(deps, ctx, sub)
    artifacts: list[str] = []
    parent = contextvars.copy_context()

    def on_chunk(event: TurnEvent) -> None:
        parent.run(_relay, ctx, sub, event, artifacts)

    while True:
        child = fresh_context(ctx.task.id)
        await asyncio.create_task(_stream(graph, graph_input, config, on_chunk), context=child)
        snapshot = await graph.aget_state(config)
        if not snapshot.interrupts:
            break
        pending = snapshot.interrupts[0]
        # The child runs the main graph, whose nodes interrupt only with a `Question`.
        value = await ctx.ask(cast(Question, pending.value))
        from langgraph.types import Command

        graph_input = Command(resume={pending.id: value})
    incomplete = bool(snapshot.values.get("incomplete"))
    await saver.adelete_thread(sub)
    return AttemptResult(
        status="incomplete" if incomplete else "success",
        summary=_last_answer(deps, sub),
        artifacts=tuple(dict.fromkeys(artifacts)),
        tokens_in=ctx.tokens_in,
        tokens_out=ctx.tokens_out,
        cost=ctx.cost,
    )


def _model_name(deps: PlanDeps, ctx: AttemptContext) -> str | None:
    """The model the subagent's steps use (its profile's, else the configured one)."""
    if ctx.profile.model:
        return ctx.profile.model
    model = getattr(getattr(deps.planner(), "config", None), "model", None)
    return model if isinstance(model, str) else None


def _sub_thread(deps: PlanDeps, ctx: AttemptContext) -> str:
    task = ctx.task
    if task.sub_thread_id and deps.store.has_thread(task.sub_thread_id):
        return task.sub_thread_id
    record = deps.store.create_thread(f"{task.id}: {task.title}", parent_id=ctx.parent_thread_id)
    change_task(deps.store, task.plan_id, task.id, sub_thread_id=record.id)
    return record.id


def _new_turn(deps: PlanDeps, ctx: AttemptContext, sub: str) -> dict[str, Any]:
    turn_id = uuid.uuid4().hex
    if ctx.mode in _PROMPTS:
        text = _PROMPTS[ctx.mode].format(error=ctx.previous_error or "no reason given")
    else:
        text = task_prompt(deps.store, ctx.task)
    deps.store.add_message(sub, "user", text, message_id=question_id(turn_id))
    agent = {
        "profile": ctx.profile.id,
        "depth": ctx.depth,
        "task_id": ctx.task.id,
        "plan_id": ctx.task.plan_id,
        "parent_thread_id": ctx.parent_thread_id,
    }
    return {"thread_id": sub, "turn_id": turn_id, "text": text, "direct": False, "agent": agent}


async def _stream(graph: Any, graph_input: Any, config: Any, on_chunk: Any) -> None:
    # A child checkpoints when it stops (done, or paused on an interrupt), not after every
    # step: a crash mid-turn repeats the turn (the tool journal keeps writes from repeating),
    # and fifty children in parallel do not each write every step to the one database.
    stream = graph.astream(graph_input, config, stream_mode=["custom"], durability="exit")
    async for _mode, chunk in stream:
        on_chunk(chunk)


def _relay(ctx: AttemptContext, sub: str, event: TurnEvent, artifacts: list[str]) -> None:
    match event:
        case UsageCounted(usage=usage):
            ctx.add_usage(usage)
            cost = ctx.cost if ctx.cost_known else None
            ctx.report(AttemptReport(usage=UsageSoFar(ctx.tokens_in + ctx.tokens_out, cost)))
            problem = ctx.over_budget()
            if problem is not None:
                raise BudgetExceededError(problem)
        case NodeStarted(node=node) if node in _ACTIVITIES:
            ctx.report(AttemptReport(activity=_ACTIVITIES[node]))
        case TokenStreamed() | NodeStarted() | NodeFinished():
            ctx.report(AttemptReport())
        case ToolCalled(server=server, tool=tool, arguments=arguments):
            path = arguments.get("path")
            if tool in _WRITES and isinstance(path, str):
                artifacts.append(path)
            activity = f"calling {server}__{tool}"
            ctx.report(AttemptReport(activity=activity, event=event, sub_thread_id=sub))
        case _:
            ctx.report(AttemptReport(event=event, sub_thread_id=sub))


def _last_answer(deps: PlanDeps, sub: str) -> str:
    for record in reversed(deps.store.recent_messages(sub, 5)):
        if record.role == "assistant" and not record.tool_calls:
            return record.content
    return ""
