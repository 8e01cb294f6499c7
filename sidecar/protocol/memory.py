"""Wire models for memory and context (issue 14): the `context`, `memory` and `turn_usage` run
events, and the methods behind the Memory panel, identity files, compaction, usage and export.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Literal

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

MemoryTier = Literal["thread", "channel", "workspace", "account"]
IdentityPath = Literal[".atrium/AGENT.md", "AGENTS.md", ".atrium/USER.md", ".atrium/SOUL.md"]
MAX_MEMORY_TEXT = 8_000
MAX_IDENTITY_BYTES = 256_000


class MemoryErrorCode(IntEnum):
    """Application error codes of the memory methods (-32070..-32079)."""

    MEMORY_REFUSED = -32070
    NO_SUCH_MEMORY = -32071
    IDENTITY_REFUSED = -32072


class ContextItemInfo(WireModel):
    """One part of a turn's context: `kind` is identity, pinned_memory, memory, summary,
    recent_messages, older_message or left_out."""

    kind: str
    label: str
    tokens: int
    included: bool
    reason: str
    ref: str | None = None


class CompactionInfo(WireModel):
    performed: bool
    reason: str
    from_seq: int | None = None
    to_seq: int | None = None
    messages: int | None = None
    memories_saved: int = 0


class ContextEvent(WireModel):
    """What the agent saw this turn: every part, its tokens, what was left out and why."""

    type: Literal["context"] = "context"
    model: str | None = None
    window: int
    budget: int = Field(description="The input budget: the window minus the answer's reserve.")
    used: int
    tokenizer: str
    items: tuple[ContextItemInfo, ...] = ()
    left_out_messages: int = 0
    warnings: tuple[str, ...] = ()
    compaction: CompactionInfo | None = None
    message_id: str | None = Field(
        default=None, description="The author's message the turn answers, when it has one."
    )


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


class TurnUsageEvent(WireModel):
    """The turn's tokens and cost (planner steps and compaction), and the thread's totals."""

    type: Literal["turn_usage"] = "turn_usage"
    model: str | None = None
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    thread_prompt_tokens: int
    thread_completion_tokens: int
    thread_cost: float | None = None


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


class IdentityFileInfo(WireModel):
    """One identity file. `truncated`: the file is over `MAX_IDENTITY_BYTES` and `text` is only
    its start (cut at a character boundary; `error` says so for the author)."""

    path: IdentityPath
    exists: bool
    text: str = ""
    error: str | None = None
    truncated: bool = False


class IdentityGetParams(WireModel):
    """No fields: the files of the current workspace."""


class IdentityGetResult(WireModel):
    workspace: str
    files: tuple[IdentityFileInfo, ...]


class IdentitySetParams(WireModel):
    path: IdentityPath
    text: str = Field(max_length=MAX_IDENTITY_BYTES)


class SummaryInfo(WireModel):
    """A summary of messages `from_seq`..`to_seq` (both included). `from_id` and `to_id` name
    the first and last message of that range; `next_id` the first message after it that shows
    as a row of its own (the author's, or an answer with text), before which the transcript's
    divider stands (None while no such message follows)."""

    from_seq: int
    to_seq: int
    messages: int
    text: str
    created_at: float
    from_id: str | None = None
    to_id: str | None = None
    next_id: str | None = None


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


class CompactionParams(WireModel):
    """`mode` turns automatic compaction on or off for the thread; `compact_now` runs a
    `/compact` turn (at once on an idle thread, right after the running turn otherwise, as a
    queued `followup`), whatever the budget; its answer says what was summarized."""

    thread_id: str
    mode: Literal["auto", "off"] | None = None
    compact_now: bool | None = None
    channel: str | None = Field(default=None, max_length=200)
    set_channel: bool = Field(default=False, description="Apply `channel` (None: no channel).")


class CompactionResult(WireModel):
    mode: Literal["auto", "off"]
    compact_next: bool
    channel: str | None = None
    summaries: tuple[SummaryInfo, ...] = ()


class TurnUsageInfo(WireModel):
    turn_id: str
    model: str | None = None
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    created_at: float


class ThreadUsageParams(WireModel):
    thread_id: str


class ThreadUsageResult(WireModel):
    turns: tuple[TurnUsageInfo, ...]
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None


class ThreadExportParams(WireModel):
    thread_id: str
    format: Literal["markdown", "json"] = "markdown"


class ThreadExportResult(WireModel):
    format: Literal["markdown", "json"]
    content: str


MEMORY_METHODS: dict[str, MethodSpec] = {
    "memory/list": MethodSpec(
        MemoryListParams, MemoryListResult, "Memories the thread sees (a tier, a search)."
    ),
    "memory/write": MethodSpec(MemoryWriteParams, MemoryInfo, "The author saves a memory."),
    "memory/update": MethodSpec(
        MemoryUpdateParams, MemoryInfo, "Edit, pin or move a memory to another tier."
    ),
    "memory/forget": MethodSpec(MemoryKeyParams, MemoryInfo, "Forget a memory."),
    "memory/events": MethodSpec(
        MemoryEventsParams,
        MemoryEventsResult,
        "The thread's stored memory and context events, each with the message its chip follows.",
    ),
    "identity/get": MethodSpec(
        IdentityGetParams, IdentityGetResult, "The workspace's identity files."
    ),
    "identity/set": MethodSpec(IdentitySetParams, IdentityFileInfo, "Write an identity file."),
    "thread/compaction": MethodSpec(
        CompactionParams, CompactionResult, "A thread's compaction setting, channel, summaries."
    ),
    "thread/usage": MethodSpec(
        ThreadUsageParams, ThreadUsageResult, "Tokens and cost per turn and for the thread."
    ),
    "thread/export": MethodSpec(
        ThreadExportParams, ThreadExportResult, "The thread as Markdown or JSON, with usage."
    ),
}
