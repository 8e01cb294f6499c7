"""Wire methods on threads (`thread/*`): create, list, get, rename and delete; the whole history
in pages and its full-text search; a thread's budget, compaction and channel, usage and export;
whether its plans run without asking for approval.

`thread/get` returns only the newest messages; `thread/messages` serves the rest in pages walked
newest first with a seq cursor, and `thread/search` finds messages anywhere in a thread.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.budgets import MAX_BUDGET_COST, MAX_BUDGET_TOKENS, BudgetInfo
from sidecar.protocol.interrupts import InterruptInfo
from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty, MessageInfo
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.plans import CoordEmpty
from sidecar.protocol.undo import (
    ThreadCheckpointsParams,
    ThreadCheckpointsResult,
    ThreadForkParams,
    ThreadForkResult,
    ThreadRewindParams,
    ThreadRewindResult,
)

ThreadStatus: TypeAlias = Literal["idle", "running", "interrupted", "failed", "cancelled"]


class ThreadInfo(WireModel):
    """A thread as the thread list shows it; `channel` names the group of threads it is filed
    under (None: none; set through `thread/compaction`)."""

    id: str
    title: str
    status: ThreadStatus
    created_at: float
    updated_at: float
    channel: str | None = None


DEFAULT_THREAD_TITLE = "New thread"
"""The title of a thread nobody named: its first turn names it after the author's message (a
`thread_renamed` event)."""


class ThreadCreateParams(WireModel):
    title: str = Field(default=DEFAULT_THREAD_TITLE, max_length=200)


class ThreadRef(WireModel):
    thread_id: str


class ThreadListResult(WireModel):
    threads: tuple[ThreadInfo, ...]


class ThreadGetParams(WireModel):
    thread_id: str
    limit: int = Field(default=500, ge=1, le=10_000, description="Most recent messages to return.")


class ThreadGetResult(WireModel):
    thread: ThreadInfo
    messages: tuple[MessageInfo, ...]
    interrupts: tuple[InterruptInfo, ...]
    status: ThreadStatus
    last_error: str | None = None


class ThreadRenameParams(WireModel):
    thread_id: str
    title: str = Field(min_length=1, max_length=200)


PAGE_LIMIT_MAX = 1000
SEARCH_LIMIT_MAX = 200


class ThreadMessagesParams(WireModel):
    """One page. Without a cursor: the newest messages. `before_seq`: the newest ones before it
    (walk back by passing a page's first seq); `after_seq`: the oldest ones after it (walk
    forward by passing a page's last seq); `before_id`: like `before_seq`, at that message."""

    thread_id: str
    before_seq: int | None = Field(default=None, ge=0)
    after_seq: int | None = Field(default=None, ge=0)
    before_id: str | None = None
    limit: int = Field(default=200, ge=1, le=PAGE_LIMIT_MAX)


class HistoryMessage(WireModel):
    """A message with its place in the thread (`seq` grows with every message stored)."""

    seq: int
    message: MessageInfo


class ThreadMessagesResult(WireModel):
    thread_id: str
    messages: tuple[HistoryMessage, ...] = Field(description="Oldest first.")
    has_older: bool = Field(description="Messages exist before the first one of this page.")
    has_newer: bool = Field(description="Messages exist after the last one of this page.")


class ThreadSearchParams(WireModel):
    """Find messages whose text has all the words of `query` (the last one also as a prefix).
    Any text is safe: quotes, `*`, `NEAR(`, `-` and `:` are searched for as words, never parsed.
    """

    thread_id: str
    query: str = Field(max_length=1000)
    limit: int = Field(default=50, ge=1, le=SEARCH_LIMIT_MAX)
    before_seq: int | None = Field(
        default=None, ge=0, description="Only hits before this seq (the next page of hits)."
    )


FIND_WORDS_MAX = 16


def find_pattern(query: str) -> str | None:
    """What Find looks for in a message, as a regular expression both Python's `re` and Qt's
    `QRegularExpression` (with Unicode properties) read alike: `query`'s words in order with
    anything but letters and digits between them ("chapter one" finds "Chapter one" and
    "chapter, one"), the first at the start of a word, the last also as the start of a longer
    word (a word being typed matches), ignoring case. None when `query` has no word.
    `thread/search` finds the messages; this counts and marks the matches in each."""
    words = re.findall(r"\w+", query)[:FIND_WORDS_MAX]
    if not words:
        return None
    return r"(?i)\b" + r"\W+".join(re.escape(word) for word in words)


class SearchHit(WireModel):
    message_id: str
    seq: int
    role: str
    snippet: str = Field(description="Plain text around the match; `…` where text was cut.")
    created_at: float
    matches: int = Field(
        default=1, ge=0, description="How often `find_pattern(query)` occurs in the message."
    )


class ThreadSearchResult(WireModel):
    thread_id: str
    hits: tuple[SearchHit, ...] = Field(description="Newest first.")
    has_more: bool = Field(description="More hits exist before the last one.")


class ThreadBudgetParams(WireModel):
    thread_id: str


class ThreadSetBudgetParams(WireModel):
    """Both None removes the budget. Setting it gives its notices again."""

    thread_id: str
    budget_tokens: int | None = Field(default=None, ge=1, le=MAX_BUDGET_TOKENS)
    budget_cost: float | None = Field(default=None, gt=0, le=MAX_BUDGET_COST)


class ThreadBudgetResult(WireModel):
    """The thread's budget (None: it has none) and what it spent: its main turns' recorded
    usage plus its plans' tasks."""

    thread_id: str
    budget: BudgetInfo | None = None
    spent_tokens: int
    spent_cost: float
    cost_unknown: bool = False


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


class AutonomousParams(WireModel):
    thread_id: str
    autonomous: bool = Field(description="Run plans without asking for approval first.")


THREAD_CREATE = "thread/create"
THREAD_LIST = "thread/list"
THREAD_GET = "thread/get"
THREAD_RENAME = "thread/rename"
THREAD_DELETE = "thread/delete"
THREAD_MESSAGES = "thread/messages"
THREAD_SEARCH = "thread/search"
THREAD_BUDGET = "thread/budget"
THREAD_SET_BUDGET = "thread/set_budget"
THREAD_COMPACTION = "thread/compaction"
THREAD_USAGE = "thread/usage"
THREAD_EXPORT = "thread/export"
THREAD_SET_AUTONOMOUS = "thread/set_autonomous"
THREAD_CHECKPOINTS = "thread/checkpoints"
THREAD_REWIND = "thread/rewind"
THREAD_FORK = "thread/fork"

THREAD_METHODS: dict[str, MethodSpec] = {
    THREAD_CREATE: MethodSpec(ThreadCreateParams, ThreadInfo, "Create a thread."),
    THREAD_LIST: MethodSpec(Empty, ThreadListResult, "All threads, newest first."),
    THREAD_GET: MethodSpec(ThreadGetParams, ThreadGetResult, "A thread with its history."),
    THREAD_RENAME: MethodSpec(ThreadRenameParams, ThreadInfo, "Rename a thread."),
    THREAD_DELETE: MethodSpec(ThreadRef, Empty, "Delete a thread and everything under it."),
    THREAD_MESSAGES: MethodSpec(
        ThreadMessagesParams, ThreadMessagesResult, "A page of a thread's messages (seq cursor)."
    ),
    THREAD_SEARCH: MethodSpec(
        ThreadSearchParams, ThreadSearchResult, "Full-text search over a thread's messages."
    ),
    THREAD_BUDGET: MethodSpec(
        ThreadBudgetParams, ThreadBudgetResult, "The thread's budget and what it spent."
    ),
    THREAD_SET_BUDGET: MethodSpec(
        ThreadSetBudgetParams, ThreadBudgetResult, "Set, change or remove the thread's budget."
    ),
    THREAD_COMPACTION: MethodSpec(
        CompactionParams, CompactionResult, "A thread's compaction setting, channel, summaries."
    ),
    THREAD_USAGE: MethodSpec(
        ThreadUsageParams, ThreadUsageResult, "Tokens and cost per turn and for the thread."
    ),
    THREAD_EXPORT: MethodSpec(
        ThreadExportParams, ThreadExportResult, "The thread as Markdown or JSON, with usage."
    ),
    THREAD_SET_AUTONOMOUS: MethodSpec(
        AutonomousParams, CoordEmpty, "Let plans run without plan approval."
    ),
    THREAD_CHECKPOINTS: MethodSpec(
        ThreadCheckpointsParams, ThreadCheckpointsResult, "The thread's turns, oldest first."
    ),
    THREAD_REWIND: MethodSpec(
        ThreadRewindParams, ThreadRewindResult, "Rewind (or redo) messages and files to a turn."
    ),
    THREAD_FORK: MethodSpec(
        ThreadForkParams, ThreadForkResult, "A new thread with the history up to a turn."
    ),
}
