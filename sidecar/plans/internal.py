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
from dataclasses import asdict
from typing import Any

from sidecar.binding.calls import fresh_context
from sidecar.plans.attempt import AttemptContext, AttemptResult, BudgetExceededError
from sidecar.plans.deps import PlanDeps
from sidecar.plans.records import change_task, task_prompt
from sidecar.store import MessageRecord
from sidecar.store.records import question_id

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
    config = {"configurable": {"thread_id": sub}}
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

    def on_chunk(chunk: dict[str, Any]) -> None:
        parent.run(_relay, ctx, sub, chunk, artifacts)

    while True:
        child = fresh_context(ctx.task.id)
        await asyncio.create_task(_stream(graph, graph_input, config, on_chunk), context=child)
        snapshot = await graph.aget_state(config)
        if not snapshot.interrupts:
            break
        pending = snapshot.interrupts[0]
        value = await ctx.ask(dict(pending.value))
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
    if ctx.profile.model and deps.planner_for is not None:
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


def _relay(ctx: AttemptContext, sub: str, chunk: dict[str, Any], artifacts: list[str]) -> None:
    kind = chunk.get("type")
    if kind == "usage":
        ctx.add_usage(chunk.get("usage", {}))
        ctx.report(
            {
                "type": "usage",
                "tokens": ctx.tokens_in + ctx.tokens_out,
                "cost": ctx.cost if ctx.cost_known else None,
            }
        )
        problem = ctx.over_budget()
        if problem is not None:
            raise BudgetExceededError(problem)
        return
    if kind == "node_started" and chunk.get("node") in _ACTIVITIES:
        ctx.report({"activity": _ACTIVITIES[str(chunk.get("node"))]})
        return
    if kind in ("token", "node_started", "node_finished"):
        ctx.report({})
        return
    event = dict(chunk)
    if kind == "message":
        record: MessageRecord = chunk["message"]
        event["message"] = asdict(record)
    if kind == "tool_call":
        if str(chunk.get("tool", "")) in _WRITES and isinstance(
            chunk.get("arguments", {}).get("path"), str
        ):
            artifacts.append(chunk["arguments"]["path"])
        event_activity = f"calling {chunk.get('server')}__{chunk.get('tool')}"
        ctx.report({"activity": event_activity, "event": event, "sub_thread_id": sub})
        return
    ctx.report({"event": event, "sub_thread_id": sub})


def _last_answer(deps: PlanDeps, sub: str) -> str:
    for record in reversed(deps.store.recent_messages(sub, 5)):
        if record.role == "assistant" and not record.tool_calls:
            return record.content
    return ""
