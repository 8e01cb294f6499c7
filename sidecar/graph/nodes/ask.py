"""interrupt: put the planner's question to the author and hand the answer back as the result of
its `ask_author` call."""

from __future__ import annotations

from typing import Any, cast

from langgraph.types import interrupt

from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.tool import record_call, record_result
from sidecar.host.types import ToolOutcome
from sidecar.turn.questions import AuthorQuestion
from sidecar.turn.state import TurnState


def make_interrupt(deps: GraphDeps):
    async def ask(state: TurnState) -> dict[str, Any]:
        call = state.get("question")
        if not call:
            return {"route": "planner"}
        thread_id = state["thread_id"]
        record_call(deps.store, thread_id, call)
        args = call["arguments"]
        question = str(args.get("question", "")).strip() or "The agent has a question."
        offered = args.get("choices")
        choices = [str(c) for c in offered if str(c).strip()] if isinstance(offered, list) else []
        ask: AuthorQuestion = {
            "kind": "question",
            "title": "The agent asks",
            "body": question,
            "question": question,
            "choices": choices,
        }
        answer = interrupt(ask)
        text = (
            str(cast(dict[str, Any], answer).get("answer", ""))
            if isinstance(answer, dict)
            else str(answer)
        )
        outcome = ToolOutcome(is_error=False, text=text)
        record_result(deps.store, thread_id, call["id"], outcome)
        entry = {"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": text}
        return {"scratch": [entry], "question": None}

    return ask
