"""OpenClaw Gateway frames (WebSocket protocol v4, OpenClaw 2026.9.6) as normalized events.

Frames are `{type: "req", id, method, params}`, `{type: "res", id, ok, payload | error}` and
`{type: "event", event, payload, seq?}`. A run's progress arrives as `agent` events for its
`runId`: `stream: "lifecycle"` (`data.phase` start / model / finishing / end / error, with
`aborted` and `stopReason`), `stream: "assistant"` (`data.delta`, `data.text` so far),
`stream: "tool"` (`data.phase` start `{name, toolCallId, args}` / update / result
`{toolCallId, isError, result}`; only to a client that connected with the `tool-events`
capability), `stream: "item"` (`kind: "tool"`, start / end with `name`, `title`, `status`, no
arguments: used when no `tool` frame came for that call) and `stream: "usage"`. `agent.wait` answers
`{status: ok | error | timeout, error?, stopReason?}`. Pure: the controller feeds frames and the
`agent.wait` payload; the accumulator then yields the `OperatorResult` like any parser's.
"""

from __future__ import annotations

import json
from typing import ClassVar

from pydantic import JsonValue

from mcp_servers.agents.events import (
    AgentEvent,
    MessageCompleted,
    MessageDelta,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.parsers.base import (
    JsonObject,
    ParseStep,
    StreamParser,
    dict_of,
    int_of,
    list_of,
    str_of,
)
from mcp_servers.agents.parsers.openclaw import classify_error
from mcp_servers.agents.results import ErrorCode, NormalizedError


class OpenClawGatewayParser(StreamParser):
    """Turns one run's Gateway `agent` events into normalized events."""

    provider: ClassVar = "openclaw"

    def __init__(self, run_id: str | None = None, session_id: str | None = None) -> None:
        super().__init__()
        self.run_id = run_id
        self._session_id = session_id
        self._text: dict[str, str] = {}
        self._order: list[str] = []
        self.aborted = False
        self.ended = False
        self.session_key: str | None = None
        self._called: set[str] = set()
        self._answered: set[str] = set()
        self._items: dict[str, JsonObject] = {}

    def on_object(self, obj: JsonObject) -> ParseStep:
        if obj.get("type") != "event" or obj.get("event") != "agent":
            return ParseStep()
        payload = dict_of(obj.get("payload"))
        if self.run_id is not None and payload.get("runId") != self.run_id:
            return ParseStep()
        self.session_key = str_of(payload.get("sessionKey")) or self.session_key
        data = dict_of(payload.get("data"))
        stream = str_of(payload.get("stream"))
        if stream == "assistant":
            return ParseStep(events=self._assistant(data))
        if stream == "tool":
            return ParseStep(events=self._tool(data))
        if stream == "item" and data.get("kind") == "tool":
            return ParseStep(events=self._item(data))
        if stream == "lifecycle":
            return ParseStep(events=self._lifecycle(payload, data))
        if stream == "usage":
            output = int_of(data.get("outputTokens"))
            if output is not None:
                self.acc.metrics.output_tokens = output
        return ParseStep()

    def feed_frame(self, frame: JsonObject) -> list[AgentEvent]:
        """Parse one decoded frame; returns the events it produced."""
        step = self.on_object(frame)
        for event in step.events:
            self.acc.observe(event)
        return step.events

    def _assistant(self, data: JsonObject) -> list[AgentEvent]:
        item = str_of(data.get("itemId")) or "item"
        if item not in self._text:
            self._order.append(item)
        delta = str_of(data.get("delta"))
        text = str_of(data.get("text"))
        if text is not None:
            self._text[item] = text
        elif delta:
            self._text[item] = self._text.get(item, "") + delta
        return [MessageDelta(text=delta)] if delta else []

    def _tool(self, data: JsonObject) -> list[AgentEvent]:
        phase = str_of(data.get("phase"))
        call_id = str_of(data.get("toolCallId"))
        if not call_id:
            return []
        if phase == "start" and call_id not in self._called:
            self._called.add(call_id)
            self._items.pop(call_id, None)
            name = str_of(data.get("name")) or "tool"
            arguments: dict[str, JsonValue] = dict_of(data.get("args"))
            return [ToolCall(call_id=call_id, name=name, input=arguments)]
        if phase == "result" and call_id not in self._answered:
            self._answered.add(call_id)
            result = data.get("result")
            output = result if isinstance(result, str) else _tool_text(result)
            failed = data.get("isError") is True
            return [ToolResult(call_id=call_id, output=output, is_error=failed)]
        return []

    def _item(self, data: JsonObject) -> list[AgentEvent]:
        """A tool item's start/end, for calls no `tool` frame describes (it has no arguments).

        The start is held back until the end (or the run's end): a `tool` frame with the
        arguments usually follows it.
        """
        call_id = str_of(data.get("toolCallId"))
        phase = str_of(data.get("phase"))
        if not call_id or (call_id in self._called and phase == "start"):
            return []
        if phase == "start":
            self._items[call_id] = data
            return []
        if phase != "end":
            return []
        events = self._flush_item(call_id)
        if call_id not in self._answered:
            self._answered.add(call_id)
            output = str_of(data.get("title")) or str_of(data.get("meta")) or ""
            failed = str_of(data.get("status")) not in ("completed", "ok", "done")
            events.append(ToolResult(call_id=call_id, output=output, is_error=failed))
        return events

    def _flush_item(self, call_id: str) -> list[AgentEvent]:
        started = self._items.pop(call_id, None)
        if started is None or call_id in self._called:
            return []
        self._called.add(call_id)
        return [ToolCall(call_id=call_id, name=str_of(started.get("name")) or "tool")]

    def _lifecycle(self, payload: JsonObject, data: JsonObject) -> list[AgentEvent]:
        phase = str_of(data.get("phase"))
        if phase == "start":
            session = str_of(payload.get("sessionId")) or self._session_id
            return [SessionStarted(session_id=session)] if session else []
        if phase == "model":
            model = str_of(data.get("model"))
            if model:
                self.acc.model = model
            return []
        if phase in ("end", "error"):
            self.ended = True
            self.aborted = data.get("aborted") is True
            detail: dict[str, JsonValue] = {
                "phase": phase,
                "aborted": self.aborted,
                "stop_reason": str_of(data.get("stopReason")),
            }
            return [StateHint(hint="gateway_run_ended", detail=detail)]
        return []

    def finish_with(self, wait: JsonObject | None) -> list[AgentEvent]:
        """The closing events once `agent.wait` answered (`wait` None: it never did)."""
        events: list[AgentEvent] = []
        for call_id in list(self._items):
            events.extend(self._flush_item(call_id))
        texts = [self._text[item] for item in self._order if self._text.get(item)]
        for text in texts:
            events.append(MessageCompleted(text=text))
        for event in events:
            self.acc.observe(event)
        self.acc.final_message = "\n\n".join(texts) if texts else None
        self.acc.metrics.turns = 1
        if wait is None:
            return events
        status = str_of(wait.get("status"))
        started, ended = int_of(wait.get("startedAt")), int_of(wait.get("endedAt"))
        if started is not None and ended is not None:
            self.acc.metrics.duration_ms = max(0, ended - started)
        if status == "ok" and not self.aborted:
            self.acc.outcome = "success"
            return events
        error = wait.get("error")
        message = str_of(error) or str_of(dict_of(error).get("message"))
        if status == "timeout":
            code = ErrorCode.TIMEOUT
            message = message or "the OpenClaw run exceeded its timeout"
        elif self.aborted:
            code = ErrorCode.INTERRUPTED
            message = message or "the OpenClaw run was aborted"
        else:
            message = message or f"OpenClaw run ended with status {status}"
            code = classify_error(message)
        detail: dict[str, JsonValue] = {"status": status, "aborted": self.aborted}
        self.acc.outcome = "failed"
        self.acc.error = NormalizedError(code=code, message=message, detail=detail)
        return events


def _tool_text(result: object) -> str:
    """A tool result's text: the `content` text parts when present, else its JSON."""
    content = list_of(dict_of(result).get("content"))
    if content:
        parts = [str_of(dict_of(p).get("text")) for p in content]
        texts = [p for p in parts if p]
        if texts:
            return "\n".join(texts)
    return "" if result is None else json.dumps(result, ensure_ascii=False)
