"""The planner's memory calls: reads get this turn's scope, writes are staged until persist.

See `sidecar.context.staging` for why writes wait for the end of the turn.
"""

from __future__ import annotations

from typing import Any

from sidecar.context.staging import PREFIX, route_memory_calls, scope_for
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.tool import record_call, record_result
from sidecar.store.records import question_id
from sidecar.turn.state import ChatEntry, ToolCallEntry, TurnState


def source_message(deps: GraphDeps, state: TurnState) -> str | None:
    """The author's message this turn answers: the source of the memories it saves."""
    own = question_id(state["turn_id"])
    if deps.store.has_message(own):
        return own
    return deps.store.last_user_message_id(state["thread_id"])


def stage_memory_calls(deps: GraphDeps, state: TurnState, update: dict[str, Any]) -> dict[str, Any]:
    """Rewrite the planner's update: memory writes answered and staged, reads scoped."""
    pending: list[ToolCallEntry] = list(update.get("pending") or [])
    if not any(str(c["name"]).startswith(PREFIX) for c in pending):
        return update
    mem = deps.memory
    thread_id = state["thread_id"]
    channel = mem.contexts.settings(thread_id).channel
    run, staged, answered = route_memory_calls(
        pending,
        memory=mem.memory,
        scope=scope_for(thread_id, channel, deps.workspace()),
        turn_id=state["turn_id"],
        source_message=source_message(deps, state),
    )
    entries: list[ChatEntry] = []
    for call, outcome in answered:
        record_call(deps.store, thread_id, call)
        record_result(deps.store, thread_id, call["id"], outcome)
        entries.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["name"],
                "content": outcome.text,
            }
        )
    scratch: list[ChatEntry] = [*update.get("scratch", []), *entries]
    return {**update, "scratch": scratch, "pending": run, "memory_writes": staged}
