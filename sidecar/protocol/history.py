"""Wire methods for a thread's whole history: pages of messages and full-text search (issue 11).

`thread/get` returns only the newest messages; `thread/messages` serves the rest in pages
walked newest first with a seq cursor, and `thread/search` finds messages anywhere in a thread.
"""

from __future__ import annotations

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import MessageInfo
from sidecar.protocol.models_base import WireModel

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


class SearchHit(WireModel):
    message_id: str
    seq: int
    role: str
    snippet: str = Field(description="Plain text around the match; `…` where text was cut.")
    created_at: float


class ThreadSearchResult(WireModel):
    thread_id: str
    hits: tuple[SearchHit, ...] = Field(description="Newest first.")
    has_more: bool = Field(description="More hits exist before the last one.")


HISTORY_METHODS: dict[str, MethodSpec] = {
    "thread/messages": MethodSpec(
        ThreadMessagesParams, ThreadMessagesResult, "A page of a thread's messages (seq cursor)."
    ),
    "thread/search": MethodSpec(
        ThreadSearchParams, ThreadSearchResult, "Full-text search over a thread's messages."
    ),
}
