"""Wire models for memory (issue 14): the methods behind the Memory panel (`memory/*`) and the
`memory` run event, a chip in the transcript for each memory saved, updated or forgotten.

Every memory says where its text came from (`provenance`, issue 25) and whether the author has
reviewed what the agent saved; a memory change the author is asked about travels in the
`approval` interrupt (`MemoryChangeInfo`).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Any, Literal, cast

from pydantic import Field, model_validator

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


MemoryProvenance = Literal["author", "agent_from_author", "agent_after_untrusted"]
"""`author`: the author wrote it (the Memory panel, a command they typed). `agent_from_author`:
the agent saved it from the author's words, in a turn that had read nothing untrusted.
`agent_after_untrusted`: the agent saved it in a turn that had read tool output, files, the web
or other agents' results."""


def _provenance_from_by(data: Any) -> Any:
    """A memory sent or stored before provenance existed has only `by`: the author's stays the
    author's; the agent's counts as saved after untrusted content (what it read is unknown)."""
    if not isinstance(data, dict):
        return data
    fields = cast(dict[str, Any], data)
    if "provenance" in fields or "by" not in fields:
        return fields
    by = fields["by"]
    return {**fields, "provenance": "author" if by == "author" else "agent_after_untrusted"}


class MemoryInfo(WireModel):
    """One memory. `by` is who wrote its text (kept for readers of the first protocol);
    `provenance` says more; `reviewed`: the author kept or approved what the agent saved."""

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
    provenance: MemoryProvenance = "agent_after_untrusted"
    reviewed: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_by(cls, data: Any) -> Any:
        return _provenance_from_by(data)

    @property
    def unreviewed(self) -> bool:
        """Saved or changed by the agent, not yet reviewed by the author."""
        return self.provenance != "author" and not self.reviewed


class MemorySnapshot(WireModel):
    """A memory as it is before, or would be after, a change the author is asked about."""

    tier: MemoryTier
    text: str
    provenance: MemoryProvenance
    pinned: bool = False


class MemoryChangeInfo(WireModel):
    """The memory change an `approval` interrupt asks about: made by a turn that had read
    untrusted content (`untrusted` says what), it changes or forgets a memory the author wrote
    or a pinned one, pins one, or touches the account tier. `before` is None for a new memory,
    `after` None for one forgotten. Any allowing decision saves it once (no grant is kept)."""

    key: str
    op: Literal["write", "update", "forget", "pin"]
    before: MemorySnapshot | None = None
    after: MemorySnapshot | None = None
    untrusted: str


class MemoryEvent(WireModel):
    """A memory saved, updated, pinned or forgotten during the turn (a chip in the transcript)."""

    type: Literal["memory"] = "memory"
    action: Literal["saved", "updated", "forgotten", "pinned", "unpinned", "failed"]
    key: str
    memory: MemoryInfo | None = None
    error: str | None = None


class MemoryListParams(WireModel):
    """`unreviewed`: only memories the agent saved or changed that the author has not reviewed
    (kept, edited or approved)."""

    thread_id: str
    tier: MemoryTier | None = None
    query: str | None = Field(default=None, max_length=1000)
    limit: int = Field(default=100, ge=1, le=1000)
    unreviewed: bool = False


class MemoryListResult(WireModel):
    memories: tuple[MemoryInfo, ...]


class MemoryWriteParams(WireModel):
    """The author saves a memory (no source message needed: the author is the source)."""

    thread_id: str
    tier: MemoryTier
    text: str = Field(max_length=MAX_MEMORY_TEXT)
    pinned: bool = False


class MemoryUpdateParams(WireModel):
    """The author edits a memory: new text becomes theirs (`provenance` author). Any change by
    the author marks it reviewed; `reviewed` alone is the review's Keep (true) or undoes it."""

    thread_id: str
    key: str
    text: str | None = Field(default=None, max_length=MAX_MEMORY_TEXT)
    tier: MemoryTier | None = None
    pinned: bool | None = None
    reviewed: bool | None = None


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
        MemoryUpdateParams,
        MemoryInfo,
        "Edit, pin or move a memory to another tier, or mark what the agent saved reviewed.",
    ),
    MEMORY_FORGET: MethodSpec(MemoryKeyParams, MemoryInfo, "Forget a memory."),
    MEMORY_EVENTS: MethodSpec(
        MemoryEventsParams,
        MemoryEventsResult,
        "The thread's stored memory and context events, each with the message its chip follows.",
    ),
}
