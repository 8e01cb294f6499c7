"""Wire models for memory (issue 14): the methods behind the Memory panel (`memory/*`) and the
`memory` run event, a chip in the transcript for each memory saved, updated or forgotten.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Literal

from pydantic import Field

from sidecar.protocol.context import ContextEvent
from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

MemoryTier = Literal["thread", "channel", "workspace", "account"]
MAX_MEMORY_TEXT = 8_000


class MemoryErrorCode(IntEnum):
    """Application error codes of the memory methods (-32070..-32079)."""

    MEMORY_REFUSED = -32070
    NO_SUCH_MEMORY = -32071
    IDENTITY_REFUSED = -32072


class MemoryInfo(WireModel):
    key: str
    tier: MemoryTier
    text: str
    by: Literal["agent", "author"]
    created_at: float
    updated_at: float
    pinned: bool = False
    source_thread: str | None = None
    source_message: str | None = None
    scope_label: str | None = None


class MemoryEvent(WireModel):
    """A memory saved, updated, pinned or forgotten during the turn (a chip in the transcript)."""

    type: Literal["memory"] = "memory"
    action: Literal["saved", "updated", "forgotten", "pinned", "unpinned", "failed"]
    key: str
    memory: MemoryInfo | None = None
    error: str | None = None


class MemoryListParams(WireModel):
    thread_id: str
    tier: MemoryTier | None = None
    query: str | None = Field(default=None, max_length=1000)
    limit: int = Field(default=100, ge=1, le=1000)


class MemoryListResult(WireModel):
    memories: tuple[MemoryInfo, ...]


class MemoryWriteParams(WireModel):
    """The author saves a memory (no source message needed: the author is the source)."""

    thread_id: str
    tier: MemoryTier
    text: str = Field(max_length=MAX_MEMORY_TEXT)
    pinned: bool = False


class MemoryUpdateParams(WireModel):
    thread_id: str
    key: str
    text: str | None = Field(default=None, max_length=MAX_MEMORY_TEXT)
    tier: MemoryTier | None = None
    pinned: bool | None = None


class MemoryKeyParams(WireModel):
    thread_id: str
    key: str


MAX_MEMORY_EVENTS = 2_000
"""Events `memory/events` returns at most (the newest)."""


class MemoryEventsParams(WireModel):
    thread_id: str
    limit: int = Field(default=MAX_MEMORY_EVENTS, ge=1, le=MAX_MEMORY_EVENTS)


class MemoryEventInfo(WireModel):
    """A stored `memory` or `context` run event of the thread, and the message its chip
    follows: the last message with a row of its own (the author's, or an answer with text) the
    turn had recorded when the event was sent, else the author's message the turn answers (so
    a turn's context report follows the author's message)."""

    run_id: str
    seq: int
    after_message: str | None = None
    event: Annotated[MemoryEvent | ContextEvent, Field(discriminator="type")]


class MemoryEventsResult(WireModel):
    """The newest `limit` memory and context events, oldest first; `has_older` when older ones
    exist."""

    events: tuple[MemoryEventInfo, ...]
    has_older: bool = False


MEMORY_LIST = "memory/list"
MEMORY_WRITE = "memory/write"
MEMORY_UPDATE = "memory/update"
MEMORY_FORGET = "memory/forget"
MEMORY_EVENTS = "memory/events"

MEMORY_METHODS: dict[str, MethodSpec] = {
    MEMORY_LIST: MethodSpec(
        MemoryListParams, MemoryListResult, "Memories the thread sees (a tier, a search)."
    ),
    MEMORY_WRITE: MethodSpec(MemoryWriteParams, MemoryInfo, "The author saves a memory."),
    MEMORY_UPDATE: MethodSpec(
        MemoryUpdateParams, MemoryInfo, "Edit, pin or move a memory to another tier."
    ),
    MEMORY_FORGET: MethodSpec(MemoryKeyParams, MemoryInfo, "Forget a memory."),
    MEMORY_EVENTS: MethodSpec(
        MemoryEventsParams,
        MemoryEventsResult,
        "The thread's stored memory and context events, each with the message its chip follows.",
    ),
}
