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
        return {"context": turns, "scratch": RESET, "pending": [], "answer": None}

    return context
