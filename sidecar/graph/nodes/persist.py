"""persist: write the assistant's answer to the conversation of record and close the turn.

The scratchpad and context slice are dropped here, so the final checkpoint of a turn is small
and the same size at turn 10 and turn 500.
"""

from __future__ import annotations

from typing import Any

from sidecar.graph.deps import GraphDeps
from sidecar.graph.emit import emit_message
from sidecar.graph.state import RESET, TurnState


def make_persist(deps: GraphDeps):
    async def persist(state: TurnState) -> dict[str, Any]:
        message_id = f"{state['turn_id']}:answer"
        if not deps.store.has_message(message_id):
            record = deps.store.add_message(
                state["thread_id"], "assistant", state.get("answer") or "", message_id=message_id
            )
            emit_message(record)
        return {
            "scratch": RESET,
            "context": [],
            "pending": [],
            "question": None,
            "answer": None,
            "text": "",
            "route": "end",
        }

    return persist
