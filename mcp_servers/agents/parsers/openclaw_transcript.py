"""OpenClaw's own session transcript (one JSON event per SQLite row) as normalized events.

OpenClaw 2026.9.6 keeps every session in `agents/<agent>/agent/openclaw-agent.sqlite`, table
`transcript_events (session_id, seq, event_json | event_zstd, ...)`. The rows of one run are
`message` events: assistant messages whose content parts are `text`, `thinking` and `toolCall`
`{id, name, arguments}`, and `toolResult` messages `{toolCallId, toolName, content, details,
isError}`. They become the same `message_completed` / `tool_call` / `tool_result` /
`artifact_created` events the Claude Code and Codex parsers emit. Pure: the controller reads the
rows (`controllers/openclaw_state.read_transcript`) and hands them over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import JsonValue

from mcp_servers.agents.events import (
    AgentEvent,
    ArtifactCreated,
    MessageCompleted,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.parsers.base import JsonObject, as_object, dict_of, list_of, str_of

# OpenClaw's file tools and the argument naming the file they change.
FILE_TOOLS: dict[str, str] = {"write": "path", "edit": "path"}


@dataclass(frozen=True)
class TranscriptRow:
    """One `transcript_events` row: its sequence number and decoded JSON event."""

    seq: int
    event: JsonObject


def decode_row(seq: int, text: str) -> TranscriptRow | None:
    """A row from its JSON text, or None if it is not a JSON object."""
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    obj = as_object(value)
    return TranscriptRow(seq, obj) if obj is not None else None


def transcript_events(rows: list[TranscriptRow], workspace: str | None = None) -> list[AgentEvent]:
    """The normalized events of the given rows, in sequence order (user turns are skipped).

    Relative file paths in tool results are resolved against `workspace` when it is given.
    """
    events: list[AgentEvent] = []
    for row in sorted(rows, key=lambda r: r.seq):
        if row.event.get("type") != "message":
            continue
        message = dict_of(row.event.get("message"))
        role = str_of(message.get("role"))
        if role == "assistant":
            events.extend(_assistant(message, str_of(row.event.get("id"))))
        elif role == "toolResult":
            events.extend(_tool_result(message, workspace))
    return events


def _assistant(message: JsonObject, message_id: str | None) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    content = message.get("content")
    if isinstance(content, str):
        return [MessageCompleted(text=content, message_id=message_id)] if content else []
    for part in map(dict_of, list_of(content)):
        kind = part.get("type")
        if kind == "text":
            text = str_of(part.get("text"))
            if text:
                events.append(MessageCompleted(text=text, message_id=message_id))
        elif kind == "thinking":
            text = str_of(part.get("thinking")) or str_of(part.get("text"))
            if text:
                events.append(
                    MessageCompleted(text=text, channel="thinking", message_id=message_id)
                )
        elif kind == "toolCall":
            call_id = str_of(part.get("id"))
            name = str_of(part.get("name"))
            if call_id and name:
                arguments: dict[str, JsonValue] = dict_of(part.get("arguments"))
                events.append(ToolCall(call_id=call_id, name=name, input=arguments))
    return events


def _tool_result(message: JsonObject, workspace: str | None) -> list[AgentEvent]:
    call_id = str_of(message.get("toolCallId"))
    if not call_id:
        return []
    content = message.get("content")
    if isinstance(content, str):
        output = content
    else:
        texts = [str_of(dict_of(p).get("text")) for p in list_of(content)]
        output = "\n".join(t for t in texts if t)
    is_error = message.get("isError") is True
    events: list[AgentEvent] = [ToolResult(call_id=call_id, output=output, is_error=is_error)]
    details = dict_of(message.get("details"))
    if not is_error and details.get("changed") is True:
        path = str_of(details.get("path")) or _changed_path(message)
        if path:
            if workspace is not None and not path.startswith("/"):
                path = f"{workspace.rstrip('/')}/{path}"
            change = "added" if details.get("created") is True else "modified"
            events.append(ArtifactCreated(path=path, change=change, call_id=call_id))
    return events


def _changed_path(message: JsonObject) -> str | None:
    """The file a write/edit result names in its unified diff (`+++ path`)."""
    if str_of(message.get("toolName")) not in FILE_TOOLS:
        return None
    patch = str_of(dict_of(message.get("details")).get("patch")) or ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            return line[4:].strip() or None
    return None
