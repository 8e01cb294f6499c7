"""persist: write the assistant's answer to the conversation of record and close the turn.

The turn's staged memory writes are flushed here, once (each write carries its own key, so a
persist that runs again after a crash writes the same memories, not new ones), each with its
provenance; a turn that read untrusted content is recorded with the range of its messages (a
later turn whose context carries them counts as having read it too); and the turn's tokens and
cost are recorded. The scratchpad and context slice are dropped, so the final
checkpoint of a turn is small and the same size at turn 10 and turn 500.
"""

from __future__ import annotations

from typing import Any

from sidecar.context.flush import apply_staged
from sidecar.context.taint import turn_untrusted
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.context import emit_memory
from sidecar.store.records import answer_id, question_id
from sidecar.turn.events import MessageWritten, TurnUsageReported, emit
from sidecar.turn.state import RESET, TurnState


def make_persist(deps: GraphDeps):
    async def persist(state: TurnState) -> dict[str, Any]:
        message_id = answer_id(state["turn_id"])
        if not deps.store.has_message(message_id):
            record = deps.store.add_message(
                state["thread_id"], "assistant", state.get("answer") or "", message_id=message_id
            )
            emit(MessageWritten(record))
        untrusted = turn_untrusted(state)
        _flush_memory(deps, state, untrusted)
        if untrusted is not None:
            _mark_untrusted(deps, state, untrusted)
        _record_usage(deps, state)
        return {
            "scratch": RESET,
            "context": [],
            "pending": [],
            "question": None,
            "answer": None,
            "text": "",
            "route": "end",
            "memory_writes": RESET,
            "usage": {"__reset__": 1},
            "untrusted": None,
        }

    return persist


def _flush_memory(deps: GraphDeps, state: TurnState, untrusted: str | None) -> None:
    ops = state.get("memory_writes") or []
    if not ops:
        return
    for applied in apply_staged(deps.memory.memory, ops, untrusted=untrusted):
        emit_memory(applied.action, applied.memory, applied.key, applied.error)


def _mark_untrusted(deps: GraphDeps, state: TurnState, untrusted: str) -> None:
    """Record the messages this turn wrote after reading untrusted content: from the author's
    message it answers (or its first message of its own) to its answer."""
    store, thread_id, turn_id = deps.store, state["thread_id"], state["turn_id"]
    last = store.message_seq(answer_id(turn_id), thread_id)
    if last is None:
        return
    first = store.message_seq(question_id(turn_id), thread_id)
    deps.memory.contexts.mark_untrusted(
        turn_id, thread_id, from_seq=last if first is None else first, to_seq=last, reason=untrusted
    )


def _record_usage(deps: GraphDeps, state: TurnState) -> None:
    usage = state.get("usage") or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    if not (prompt or completion):
        return
    config = getattr(deps.planner(), "config", None)
    model = getattr(config, "model", None)
    model = model if isinstance(model, str) else None
    from sidecar.llm.window import turn_cost

    cost = turn_cost(model, prompt, completion) if model else None
    contexts = deps.memory.contexts
    contexts.record_usage(
        state["turn_id"],
        state["thread_id"],
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost,
    )
    totals = contexts.usage_totals(state["thread_id"])
    emit(
        TurnUsageReported(
            model=model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost=cost,
            thread_prompt_tokens=totals.prompt_tokens,
            thread_completion_tokens=totals.completion_tokens,
            thread_cost=totals.cost,
        )
    )
