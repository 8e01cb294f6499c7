"""Codex `codex exec --json` parser (the `thread.* / turn.* / item.*` stream).

Items are normalized by type; unknown items and events are ignored. `turn.completed` and
`turn.failed` are the terminal signals; a top-level `error` is remembered and becomes the
failure if the process ends without `turn.failed`. An `error` *item* is a non-fatal warning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import ClassVar

from pydantic import JsonValue

from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    MessageCompleted,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
    UsageReported,
)
from mcp_servers.agents.parsers.base import (
    JsonObject,
    ParseStep,
    StreamParser,
    dict_of,
    http_error_code,
    int_of,
    list_of,
    str_of,
)
from mcp_servers.agents.results import ArtifactChange, ErrorCode, NormalizedError

_STATUS_IN_TEXT = re.compile(r"(?:unexpected status|last status:)\s*(\d{3})\b")
_SERVER_BUSY = "experiencing high demand"
_CHANGE_KINDS: dict[str, ArtifactChange] = {
    "add": "added",
    "update": "modified",
    "delete": "deleted",
}
_TOOL_ITEMS = (
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
)


class CodexStreamParser(StreamParser):
    """Parser for one `codex exec --json` process's stdout."""

    provider: ClassVar = "codex"

    def __init__(self) -> None:
        super().__init__()
        self._started_calls: set[str] = set()
        self._final_answer: str | None = None
        self._handlers: dict[str, Callable[[JsonObject], ParseStep]] = {
            "thread.started": self._thread_started,
            "turn.started": lambda _obj: ParseStep(events=[StateHint(hint="turn_started")]),
            "item.started": self._item_started,
            "item.updated": self._item_updated,
            "item.completed": self._item_completed,
            "turn.completed": self._turn_completed,
            "turn.failed": self._turn_failed,
            "error": self._error,
            "request_user_input": self._user_input,
        }

    def on_object(self, obj: JsonObject) -> ParseStep:
        handler = self._handlers.get(str_of(obj.get("type")) or "")
        return handler(obj) if handler else ParseStep()

    def _thread_started(self, obj: JsonObject) -> ParseStep:
        thread_id = str_of(obj.get("thread_id"))
        if not thread_id:
            return ParseStep()
        return ParseStep(events=[SessionStarted(session_id=thread_id)])

    def _item_started(self, obj: JsonObject) -> ParseStep:
        item = dict_of(obj.get("item"))
        kind = str_of(item.get("type")) or ""
        if kind == "todo_list":
            return ParseStep(events=[_plan_hint(item)])
        return ParseStep(events=self._call_once(item, kind))

    def _item_updated(self, obj: JsonObject) -> ParseStep:
        item = dict_of(obj.get("item"))
        if item.get("type") == "todo_list":
            return ParseStep(events=[_plan_hint(item)])
        return ParseStep()

    def _item_completed(self, obj: JsonObject) -> ParseStep:
        item = dict_of(obj.get("item"))
        kind = str_of(item.get("type")) or ""
        item_id = str_of(item.get("id"))
        if kind == "agent_message":
            text = str_of(item.get("text")) or ""
            self.acc.note_text(text, None)
            if item.get("phase") == "final_answer":
                self._final_answer = text
            return ParseStep(events=[MessageCompleted(text=text, message_id=item_id)])
        if kind == "reasoning":
            text = str_of(item.get("text")) or ""
            thought = MessageCompleted(text=text, message_id=item_id, channel="thinking")
            return ParseStep(events=[thought])
        if kind in _TOOL_ITEMS and item_id:
            events = self._call_once(item, kind)
            events.append(_tool_result(item, kind, item_id))
            events.extend(_artifacts(item, kind, item_id))
            return ParseStep(events=events)
        if kind == "todo_list":
            return ParseStep(events=[_plan_hint(item)])
        if kind == "error":
            detail: dict[str, JsonValue] = {"message": str_of(item.get("message"))}
            return ParseStep(events=[StateHint(hint="warning", detail=detail)])
        if kind == "plan":
            plan = StateHint(hint="plan", detail={"text": str_of(item.get("text"))})
            return ParseStep(events=[plan])
        return ParseStep()

    def _call_once(self, item: JsonObject, kind: str) -> list[AgentEvent]:
        item_id = str_of(item.get("id"))
        if kind not in _TOOL_ITEMS or not item_id or item_id in self._started_calls:
            return []
        self._started_calls.add(item_id)
        name, tool_input = _call_shape(item, kind)
        return [ToolCall(call_id=item_id, name=name, input=tool_input)]

    def _turn_completed(self, obj: JsonObject) -> ParseStep:
        usage = dict_of(obj.get("usage"))
        metrics = self.acc.metrics
        metrics.input_tokens = _add(metrics.input_tokens, usage.get("input_tokens"))
        metrics.output_tokens = _add(metrics.output_tokens, usage.get("output_tokens"))
        metrics.cache_read_tokens = _add(
            metrics.cache_read_tokens, usage.get("cached_input_tokens")
        )
        metrics.cache_write_tokens = _add(
            metrics.cache_write_tokens, usage.get("cache_write_input_tokens")
        )
        metrics.reasoning_tokens = _add(
            metrics.reasoning_tokens, usage.get("reasoning_output_tokens")
        )
        metrics.turns = (metrics.turns or 0) + 1
        self.acc.outcome = "success"
        self.acc.error = None
        self.acc.final_message = self._final_answer or self.acc.last_text
        used = UsageReported(
            input_tokens=metrics.input_tokens or 0, output_tokens=metrics.output_tokens or 0
        )
        return ParseStep(events=[used, StateHint(hint="turn_completed")])

    def _turn_failed(self, obj: JsonObject) -> ParseStep:
        message = str_of(dict_of(obj.get("error")).get("message")) or "turn failed"
        self.acc.metrics.turns = (self.acc.metrics.turns or 0) + 1
        self.acc.outcome = "failed"
        self.acc.error = _codex_error(message)
        self.acc.final_message = self._final_answer or self.acc.last_text
        return ParseStep(events=[StateHint(hint="turn_failed", detail={"message": message})])

    def _error(self, obj: JsonObject) -> ParseStep:
        message = str_of(obj.get("message")) or "error"
        if message.startswith("Reconnecting"):
            # Transport retries ("Reconnecting... 2/5 (...)") are progress, not failures.
            return ParseStep(events=[StateHint(hint="retrying", detail={"message": message})])
        self.acc.pending_error = _codex_error(message)
        return ParseStep(events=[StateHint(hint="error", detail={"message": message})])

    def _user_input(self, obj: JsonObject) -> ParseStep:
        detail: dict[str, JsonValue] = {"call_id": str_of(obj.get("call_id"))}
        return ParseStep(events=[StateHint(hint="user_input_rejected", detail=detail)])


def _call_shape(item: JsonObject, kind: str) -> tuple[str, JsonObject]:
    if kind == "command_execution":
        return kind, {"command": item.get("command")}
    if kind == "file_change":
        return kind, {"changes": list_of(item.get("changes"))}
    if kind == "mcp_tool_call":
        name = f"mcp:{str_of(item.get('server')) or '?'}/{str_of(item.get('tool')) or '?'}"
        return name, dict_of(item.get("arguments"))
    if kind == "web_search":
        return kind, {"query": item.get("query")}
    return f"collab:{str_of(item.get('tool')) or '?'}", {"prompt": item.get("prompt")}


def _tool_result(item: JsonObject, kind: str, item_id: str) -> ToolResult:
    status = str_of(item.get("status")) or ""
    exit_code = int_of(item.get("exit_code"))
    if kind == "command_execution":
        output = str_of(item.get("aggregated_output")) or ""
    elif kind == "mcp_tool_call":
        output = _mcp_output(item)
    else:
        output = ""
    failed = status in ("failed", "declined") or (exit_code is not None and exit_code != 0)
    failed = failed or item.get("error") not in (None, {})
    return ToolResult(
        call_id=item_id,
        output=output,
        is_error=failed,
        denied=status == "declined",
        exit_code=exit_code,
    )


def _mcp_output(item: JsonObject) -> str:
    error = str_of(dict_of(item.get("error")).get("message"))
    if error:
        return error
    blocks = list_of(dict_of(item.get("result")).get("content"))
    return "\n".join(t for t in (str_of(dict_of(b).get("text")) for b in blocks) if t)


def _artifacts(item: JsonObject, kind: str, item_id: str) -> list[AgentEvent]:
    if kind != "file_change" or item.get("status") != "completed":
        return []
    events: list[AgentEvent] = []
    for change in map(dict_of, list_of(item.get("changes"))):
        path = str_of(change.get("path"))
        if path:
            change_kind = _CHANGE_KINDS.get(str_of(change.get("kind")) or "", "modified")
            events.append(ArtifactCreated(path=path, change=change_kind, call_id=item_id))
    return events


def _plan_hint(item: JsonObject) -> StateHint:
    items: list[JsonValue] = [
        {"text": str_of(entry.get("text")), "completed": entry.get("completed") is True}
        for entry in map(dict_of, list_of(item.get("items")))
    ]
    return StateHint(hint="plan", detail={"items": items})


def _codex_error(message: str) -> NormalizedError:
    """An error from Codex, classified by the HTTP status or body it mentions.

    Seen shapes: a JSON error body with or without `status` (400 from the Responses API), the
    text "unexpected status 401 Unauthorized: ..." or "exceeded retry limit, last status: 429
    ..." (codex-cli 0.169.0), and its fixed sentence for 5xx answers ("We're currently
    experiencing high demand..."). Anything else is an `agent_error`.
    """
    detail: dict[str, JsonValue] = {}
    code = ErrorCode.AGENT_ERROR
    try:
        body: object = json.loads(message)
    except ValueError:
        body = None
    status = int_of(dict_of(body).get("status"))
    inner = str_of(dict_of(dict_of(body).get("error")).get("message"))
    if status is None and (match := _STATUS_IN_TEXT.search(message)):
        status = int(match.group(1))
    if status is not None:
        detail["status"] = status
        code = http_error_code(status)
    elif inner is not None or _SERVER_BUSY in message:
        code = ErrorCode.API_ERROR
    return NormalizedError(code=code, message=inner or message, detail=detail)


def _add(total: int | None, value: object) -> int | None:
    number = int_of(value)
    if number is None:
        return total
    return (total or 0) + number
