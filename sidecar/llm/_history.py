"""Turn Atrium's `ChatTurn`s into the inputs of the planner signature (imported lazily: uses DSPy).

DSPy's `History` is a list of events keyed by signature fields: `request` (the author's message)
becomes a user message, `answer` / `tool_calls` the assistant's reply, and `tool_calls` carrying
`tool_call_results` become proper tool-result turns (native tool calling: `role="tool"` messages
with the call id; text tool calling: a `[[ ## tool_call_results ## ]]` user message).
The author's newest message, when it has not been answered yet, is passed as `request` itself.

The leading events that are plain exchanges of earlier turns (the author's message and the
answer, text only) are `settled`: they never change, so the engines render them once and reuse
them (`sidecar.llm._prefix`) while DSPy formats only the events after them.
"""

# DSPy ships no type information (no py.typed).
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import dspy
from dspy.adapters.types.tool import ToolCallResults

from sidecar.llm.types import ChatTurn, ToolCallRequest
from sidecar.llm.untrusted import UNTRUSTED_TAG, mark_untrusted

__all__ = [
    "MISSING_RESULT",
    "UNTRUSTED_TAG",
    "Event",
    "PlannerInputs",
    "build_inputs",
    "mark_untrusted",
]

logger = logging.getLogger(__name__)

MISSING_RESULT = "No result was recorded for this call."

Event: TypeAlias = dict[str, Any]


@dataclass(slots=True)
class PlannerInputs:
    """What one planner call sends: system notes, prior events, and the pending request."""

    system_notes: list[str] = field(default_factory=list[str])
    events: list[Event] = field(default_factory=list[Event])
    request: str | None = None
    settled: int = 0
    """How many leading events are plain exchanges (see the module docstring)."""


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
        # Called once per message of the window, every step: the common cases come first.
        role = turn.role
        if role == "user":
            if self._call_event is not None:
                self._close_calls()
            self._add_request(turn.content)
        elif role == "assistant":
            if self._call_event is not None:
                self._close_calls()
            self._add_reply(turn)
        elif role == "system":
            if turn.content.strip():
                self.inputs.system_notes.append(turn.content.strip())
        else:
            self._add_result(turn)

    def finish(self) -> PlannerInputs:
        self._close_calls()
        events = self.inputs.events
        if events and _request_only(events[-1]):
            self.inputs.request = events.pop()["request"]
        settled = 0
        for event in events:
            if not _plain(event):
                break
            settled += 1
        self.inputs.settled = settled
        return self.inputs

    def _add_request(self, content: str) -> None:
        events = self.inputs.events
        if events and _request_only(events[-1]):
            # Two author messages in a row (e.g. one sent while a turn failed): keep both.
            events[-1]["request"] = f"{events[-1]['request']}\n\n{content}"
        else:
            events.append({"request": content})

    def _add_reply(self, turn: ChatTurn) -> None:
        events = self.inputs.events
        event: Event = events[-1] if events and _request_only(events[-1]) else {}
        if not event:
            events.append(event)
        if not turn.tool_calls or not self.native or turn.content.strip():
            event["answer"] = turn.content
        if turn.tool_calls:
            self._calls = list(turn.tool_calls)
            self._results = {}
            self._call_event = event
        elif not self.native:
            event["tool_calls"] = _no_calls()

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


@functools.cache
def _no_calls() -> dspy.ToolCalls:
    """An empty `tool_calls` field, one for every reply (nothing changes it: an event's calls
    are copied when their results are attached)."""
    return dspy.ToolCalls(tool_calls=[])


def _request_only(event: Event) -> bool:
    """An author's message with no reply yet."""
    return len(event) == 1 and "request" in event


_NO_CALLS = frozenset({"request", "answer", "tool_calls"})


def _plain(event: Event) -> bool:
    """An exchange of text: an answer (after the author's message, or alone), and, on the text
    path, its empty `tool_calls` field; no tool call, no result."""
    if "answer" not in event or not event.keys() <= _NO_CALLS:
        return False
    calls = event.get("tool_calls")
    return calls is None or not calls.tool_calls
