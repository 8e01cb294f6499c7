"""`ActivityLog`: what one subagent did, as short lines, from its nested run events (no Qt).

A subagent's own run events arrive wrapped in `subagent_event`; this turns them into a bounded
list of lines for the run tree: tool calls (with their progress and outcome), progress
messages (a strong agent's normalized events arrive as `tool_progress` messages of its agents
call), streamed text and messages. `activity_of` builds the same lines from a task's stored
events (`task/events`), so what a task did reads the same after a reopen or a restart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from pydantic import TypeAdapter, ValidationError

from sidecar.protocol import (
    InterruptEvent,
    MessageEvent,
    RunEventBody,
    RunFailed,
    SubagentEvent,
    TaskCheck,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)

EntryKind: TypeAlias = Literal["tool", "progress", "text", "message", "note", "check"]
LINE_LENGTH = 160
MAX_ENTRIES = 200
_EVENT_BODY: TypeAdapter[RunEventBody] = TypeAdapter(RunEventBody)


def nested_event(event: SubagentEvent) -> RunEventBody | TaskCheck | None:
    """The run event (or check) a `subagent_event` wraps; None for a shape this desktop does not
    know yet (nothing to show for it)."""
    try:
        if event.event.get("type") == "check":
            return TaskCheck.model_validate(event.event)
        return _EVENT_BODY.validate_python(event.event)
    except ValidationError:
        return None


def one_line(text: str, limit: int = LINE_LENGTH) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _arguments(arguments: dict[str, Any]) -> str:
    return one_line(json.dumps(arguments, ensure_ascii=False, sort_keys=True), 80)


def _progress(event: ToolProgress) -> str:
    if event.total:
        return f"{event.progress:g}/{event.total:g}"
    return f"{event.progress:g}"


@dataclass
class ActivityEntry:
    """One line of activity. `state` is a short status ("running", "ok", "error", a progress
    figure); `detail` is the longer text for a tooltip (a tool's result, a whole message)."""

    kind: EntryKind
    text: str
    call_id: str | None = None
    state: str = ""
    detail: str = ""
    open: bool = False


class ActivityLog:
    """The newest `limit` lines of one task's subagent activity; `dropped` counts the older
    lines let go."""

    def __init__(self, limit: int = MAX_ENTRIES) -> None:
        self.entries: list[ActivityEntry] = []
        self.dropped = 0
        self.limit = limit

    def __len__(self) -> int:
        return len(self.entries)

    def apply(self, event: RunEventBody | TaskCheck) -> bool:
        """Take in one nested run event (or a check of the task's result); True if the lines
        changed."""
        match event:
            case TaskCheck():
                self._on_check(event)
            case Token(text=text):
                self._stream(text)
            case MessageEvent(message=message):
                if not message.content.strip() or message.role == "tool":
                    return False  # tool calls and results have lines of their own
                self._close_stream(message.role == "assistant")
                self._add(ActivityEntry("message", f"{message.role}: {one_line(message.content)}",
                                        detail=message.content))  # fmt: skip
            case ToolCall():
                self._on_call(event)
            case ToolProgress():
                return self._on_progress(event)
            case ToolResult():
                return self._on_result(event)
            case InterruptEvent(interrupt=interrupt):
                self._add(ActivityEntry("note", f"waiting: {one_line(interrupt.title)}"))
            case RunFailed(error=error):
                self._add(ActivityEntry("note", f"failed: {one_line(error.message)}", None,
                                        "error", error.message))  # fmt: skip
            case _:
                return False
        return True

    def _on_check(self, check: TaskCheck) -> None:
        """One line per check: `running` while it runs, then its verdict and reasons."""
        last = self.entries[-1] if self.entries else None
        text = f"check of attempt {check.attempt} ({check.method})"
        if check.verdict != "running":
            reasons = f": {one_line(check.reasons)}" if check.reasons else ""
            text = f"{text} {check.verdict.upper()}{reasons}"
        entry = ActivityEntry("check", text, state=check.verdict, detail=check.reasons)
        if last is not None and last.kind == "check" and last.state == "running":
            self.entries[-1] = entry
        else:
            self._add(entry)

    def _tool(self, call_id: str) -> ActivityEntry | None:
        for entry in reversed(self.entries):
            if entry.kind == "tool" and entry.call_id == call_id:
                return entry
        return None

    def _on_call(self, event: ToolCall) -> None:
        """A new line per call; a call announced again (the sidecar re-announces a call when
        it runs after an approval) updates its line rather than leave one "running" forever."""
        text = f"{event.server}/{event.tool} {_arguments(event.arguments)}"
        tool = self._tool(event.call_id)
        if tool is None:
            self._add(ActivityEntry("tool", text, event.call_id, "running"))
        else:
            tool.text, tool.state = text, "running"

    def _on_progress(self, event: ToolProgress) -> bool:
        tool = self._tool(event.call_id)
        if tool is not None and tool.state not in ("ok", "error"):
            tool.state = _progress(event)
        if event.message:
            self._add(ActivityEntry("progress", one_line(event.message), event.call_id,
                                    detail=event.message))  # fmt: skip
            return True
        return tool is not None

    def _on_result(self, event: ToolResult) -> bool:
        tool = self._tool(event.call_id)
        if tool is None:
            return False
        tool.state = "error" if event.is_error else "ok"
        tool.detail = event.content
        return True

    def _stream(self, text: str) -> None:
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind == "text" and last.open:
            last.detail += text
            last.text = one_line(last.detail)
        else:
            self._add(ActivityEntry("text", one_line(text), detail=text, open=True))

    def _close_stream(self, replace: bool) -> None:
        """End the streamed text; an assistant message replaces the text it completes."""
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind == "text" and last.open:
            if replace:
                self.entries.pop()
            else:
                last.open = False

    def _add(self, entry: ActivityEntry) -> None:
        self.entries.append(entry)
        if len(self.entries) > self.limit:
            excess = len(self.entries) - self.limit
            del self.entries[:excess]
            self.dropped += excess


def activity_of(events: Iterable[SubagentEvent], limit: int = MAX_ENTRIES) -> ActivityLog:
    """The lines of a task's stored events, oldest first (as the live ones would have been)."""
    log = ActivityLog(limit)
    for event in events:
        body = nested_event(event)
        if body is not None:
            log.apply(body)
    return log
