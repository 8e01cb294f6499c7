"""Rows as frozen dataclasses: what the store hands to the runtime and the graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidecar.json_value import JsonObject


def question_id(turn_id: str) -> str:
    """The id of the author's message that starts turn `turn_id` (its question)."""
    return f"{turn_id}:user"


def answer_id(turn_id: str) -> str:
    """The id of turn `turn_id`'s answer."""
    return f"{turn_id}:answer"


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    id: str
    title: str
    status: str
    last_error: str | None
    created_at: float
    updated_at: float
    parent_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredToolCall:
    id: str
    server: str
    tool: str
    arguments: JsonObject


@dataclass(frozen=True, slots=True)
class MessageRecord:
    id: str
    thread_id: str
    role: str
    content: str
    created_at: float
    tool_calls: tuple[StoredToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: str
    thread_id: str
    kind: str
    status: str
    error: str | None
    started_at: float
    ended_at: float | None


@dataclass(frozen=True, slots=True)
class InterruptRecord:
    id: str
    thread_id: str
    run_id: str | None
    kind: str
    payload: dict[str, Any]
    status: str
    created_at: float
    answer: dict[str, Any] | None = field(default=None)


@dataclass(frozen=True, slots=True)
class GrantRecord:
    thread_id: str
    server: str
    tool: str
    created_at: float


@dataclass(frozen=True, slots=True)
class JournalRecord:
    key: str
    thread_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    status: str
    result: dict[str, Any] | None
