"""A2A envelopes: how subagents report to whoever dispatched them.

Sender and receiver are hierarchical identities (`thread/<id>`, `thread/<id>/task/<task>`).
A child's `final` or `error` envelope goes through the durable outbox: written before the parent
consumes it, acknowledged after, so a crash in between delivers it on resume, once.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

EnvelopeKind: TypeAlias = Literal[
    "task",
    "plan",
    "observation",
    "question",
    "message",
    "decision",
    "review",
    "tool_call",
    "tool_result",
    "artifact",
    "handoff",
    "error",
    "final",
]
KINDS: frozenset[str] = frozenset(get_args(EnvelopeKind))


def agent_id(thread_id: str, task_id: str | None = None) -> str:
    return f"thread/{thread_id}" if task_id is None else f"thread/{thread_id}/task/{task_id}"


@dataclass(frozen=True, slots=True)
class Envelope:
    thread_id: str
    sender: str
    receiver: str
    kind: EnvelopeKind
    payload: dict[str, Any]
    artifacts: tuple[str, ...] = ()
    reply_to: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    created_at: float = field(default_factory=time.time)
