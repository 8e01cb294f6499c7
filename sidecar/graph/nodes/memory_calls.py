"""The planner's memory calls: reads get this turn's scope, writes are staged until persist, and
a change made after untrusted content that the author must see first is left to the tool node,
which asks about it (`sidecar.graph.nodes.memory_consent`).

See `sidecar.context.staging` for why writes wait for the end of the turn and
`sidecar.context.consent` for which changes are asked about.
"""

from __future__ import annotations

from typing import Any

from sidecar.context.consent import provenance_for
from sidecar.context.staging import PREFIX, route_memory_calls, scope_for, source_message
from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.tool import record_call, record_result
from sidecar.turn.state import ChatEntry, ToolCallEntry, TurnState


def stage_memory_calls(
    deps: GraphDeps, state: TurnState, update: dict[str, Any], untrusted: str | None = None
) -> dict[str, Any]:
    """Rewrite the planner's update: memory writes answered and staged, reads scoped.

    `untrusted`: why the turn has read untrusted content (None: it has not); a direct command
    is the author's own, whatever the turn read."""
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
        source_message=source_message(deps.store, state),
        provenance=provenance_for(by_author=bool(state.get("direct")), untrusted=untrusted),
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
