"""Turn Atrium's `ChatTurn`s into the inputs of the planner signature (imported lazily: uses DSPy).

DSPy's `History` is a list of events keyed by signature fields: `request` (the author's message)
becomes a user message, `answer` / `tool_calls` the assistant's reply, and `tool_calls` carrying
`tool_call_results` become proper tool-result turns (native tool calling: `role="tool"` messages
with the call id; text tool calling: a `[[ ## tool_call_results ## ]]` user message).
The author's newest message, when it has not been answered yet, is passed as `request` itself.
"""

# DSPy ships no type information (no py.typed).
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import dspy
from dspy.adapters.types.tool import ToolCallResults

from sidecar.llm.types import ChatTurn, ToolCallRequest
from sidecar.llm.untrusted import UNTRUSTED_TAG, mark_untrusted

__all__ = ["MISSING_RESULT", "UNTRUSTED_TAG", "PlannerInputs", "build_inputs", "mark_untrusted"]

logger = logging.getLogger(__name__)

MISSING_RESULT = "No result was recorded for this call."

Event: TypeAlias = dict[str, Any]


@dataclass(slots=True)
class PlannerInputs:
    """What one planner call sends: system notes, prior events, and the pending request."""

    system_notes: list[str] = field(default_factory=list[str])
    events: list[Event] = field(default_factory=list[Event])
    request: str | None = None


def build_inputs(history: Sequence[ChatTurn], *, native: bool) -> PlannerInputs:
    """Group the conversation into signature events, ready for `dspy.History`.

    `native` selects how assistant turns are written: for native tool calling an empty answer is
    left out; for text tool calling every event carries both output fields, the way the model is
    asked to write them.
    """
    builder = _EventBuilder(native=native)
    for turn in history:
        builder.add(turn)
    return builder.finish()


class _EventBuilder:
    def __init__(self, *, native: bool) -> None:
        self.native = native
        self.inputs = PlannerInputs()
        self._calls: list[ToolCallRequest] = []
        self._results: dict[str, str] = {}
        self._call_event: Event | None = None

    def add(self, turn: ChatTurn) -> None:
        if turn.role == "system":
            if turn.content.strip():
                self.inputs.system_notes.append(turn.content.strip())
        elif turn.role == "user":
            self._close_calls()
            self._add_request(turn.content)
        elif turn.role == "assistant":
            self._close_calls()
            self._add_reply(turn)
        else:
            self._add_result(turn)

    def finish(self) -> PlannerInputs:
        self._close_calls()
        events = self.inputs.events
        if events and set(events[-1]) == {"request"}:
            self.inputs.request = events.pop()["request"]
        return self.inputs

    def _add_request(self, content: str) -> None:
        events = self.inputs.events
        if events and set(events[-1]) == {"request"}:
            # Two author messages in a row (e.g. one sent while a turn failed): keep both.
            events[-1]["request"] = f"{events[-1]['request']}\n\n{content}"
        else:
            events.append({"request": content})

    def _add_reply(self, turn: ChatTurn) -> None:
        events = self.inputs.events
        event: Event = events[-1] if events and set(events[-1]) == {"request"} else {}
        if not event:
            events.append(event)
        if turn.content.strip() or not self.native or not turn.tool_calls:
            event["answer"] = turn.content
        if turn.tool_calls:
            self._calls = list(turn.tool_calls)
            self._results = {}
            self._call_event = event
        elif not self.native:
            event["tool_calls"] = dspy.ToolCalls(tool_calls=[])

    def _add_result(self, turn: ChatTurn) -> None:
        call = next((c for c in self._calls if c.id == turn.tool_call_id), None)
        if call is None:
            logger.warning("dropping a tool result with no matching call (%s)", turn.tool_call_id)
            return
        self._results[call.id] = mark_untrusted(turn.name or call.name, turn.content)

    def _close_calls(self) -> None:
        """Attach the pending calls and their results to the assistant event that made them."""
        if self._call_event is None:
            return
        calls = dspy.ToolCalls(
            tool_calls=[
                dspy.ToolCalls.ToolCall(id=c.id, name=c.name, args=dict(c.arguments))
                for c in self._calls
            ]
        )
        values = [
            self._results.get(c.id, mark_untrusted(c.name, MISSING_RESULT)) for c in self._calls
        ]
        errors = [c.id not in self._results for c in self._calls]
        results = ToolCallResults.from_tool_calls_and_values(calls, values, errors)
        self._call_event["tool_calls"] = calls.model_copy(update={"tool_call_results": results})
        self._calls, self._results, self._call_event = [], {}, None
