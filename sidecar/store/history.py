"""A thread's whole history: messages in pages (a seq cursor) and full-text search (FTS5).

`messages_fts` is an external-content FTS5 table over `messages.content` keyed by `messages.seq`,
kept in step by triggers; a database written before the index existed is backfilled once when it
is opened. Author text never reaches FTS5's query language: `fts_query` turns it into quoted
terms, so `"`, `*`, `NEAR(`, `-`, `:` and the like are searched for as words, never parsed.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from sidecar.store.records import MessageRecord, StoredToolCall

HISTORY_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, content='messages', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS messages_fts_after_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_after_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_after_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
END;
"""

MAX_QUERY_TERMS = 16
"""Terms past this many are ignored: a pasted paragraph should not become a huge query."""

SearchOrder = Literal["newest", "relevance"]

_TERM = re.compile(r"\w+", re.UNICODE)
_DEFAULT_ROLES = ("user", "assistant")


def create_message_index(conn: sqlite3.Connection) -> None:
    """Create the FTS index and its triggers; on a database that had messages before the index
    existed, index them all (once)."""
    existed = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts'"
    ).fetchone()
    conn.executescript(HISTORY_SCHEMA)
    if existed is None:
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")


def fts_query(text: str, *, any_term: bool = False) -> str | None:
    """An FTS5 query that finds `text`'s words (all of them, or any with `any_term`), each
    matched as a quoted term and the last one also as a prefix (so a word being typed matches).
    None when `text` has no word to search for."""
    terms = _TERM.findall(text)[:MAX_QUERY_TERMS]
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    quoted[-1] += "*"
    return (" OR " if any_term else " ").join(quoted)


@dataclass(frozen=True, slots=True)
class MessageHit:
    """One message that matched a search. `snippet` is plain text around the match (`…` where
    text was cut); `rank` is FTS5's bm25 rank (lower is more relevant)."""

    message_id: str
    thread_id: str
    seq: int
    role: str
    content: str
    snippet: str
    created_at: float
    rank: float


@dataclass(frozen=True, slots=True)
class MessagePage:
    """Messages oldest first with their seqs, and whether the thread has more on either side."""

    messages: tuple[tuple[int, MessageRecord], ...]
    has_older: bool
    has_newer: bool


def message_record(row: sqlite3.Row) -> MessageRecord:
    raw_calls = cast(list[dict[str, Any]], json.loads(row["tool_calls"] or "[]"))
    return MessageRecord(
        id=row["id"],
        thread_id=row["thread_id"],
        role=row["role"],
        content=row["content"],
        created_at=row["created_at"],
        tool_calls=tuple(StoredToolCall(**c) for c in raw_calls),
        tool_call_id=row["tool_call_id"],
        is_error=bool(row["is_error"]),
    )


class HistoryRepo:
    """Paged and searchable access to the conversation of record (a `Store` mixin)."""

    conn: sqlite3.Connection

    def message_seq(self, message_id: str, thread_id: str | None = None) -> int | None:
        """The seq of a message (of `thread_id`, if given), or None."""
        row = self.conn.execute("SELECT seq, thread_id FROM messages WHERE id = ?", (message_id,))
        found = row.fetchone()
        if found is None or (thread_id is not None and found[1] != thread_id):
            return None
        return int(found[0])

    def messages_page(
        self,
        thread_id: str,
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
        limit: int = 200,
    ) -> MessagePage:
        """Up to `limit` messages of a thread, oldest first: the newest ones before `before_seq`
        (default: the newest of all), or with `after_seq`, the oldest ones after it. Pages walk
        newest first by passing the first seq of a page as the next `before_seq`. Index range
        scans only: the cost does not grow with the thread."""
        if after_seq is not None:
            rows = self.conn.execute(
                "SELECT * FROM messages WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                (thread_id, after_seq, limit + 1),
            ).fetchall()
            page = [(int(r["seq"]), message_record(r)) for r in rows[:limit]]
            has_older = self._has_message(thread_id, "<=", after_seq)
            return MessagePage(tuple(page), has_older, len(rows) > limit)
        if before_seq is None:
            rows = self.conn.execute(
                "SELECT * FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT ?",
                (thread_id, limit + 1),
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT * FROM messages WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
                (thread_id, before_seq, limit + 1),
            ).fetchall()
        page = [(int(r["seq"]), message_record(r)) for r in reversed(rows[:limit])]
        has_newer = before_seq is not None and self._has_message(thread_id, ">=", before_seq)
        return MessagePage(tuple(page), len(rows) > limit, has_newer)

    def _has_message(self, thread_id: str, op: Literal["<=", ">="], seq: int) -> bool:
        row = self.conn.execute(
            f"SELECT 1 FROM messages WHERE thread_id = ? AND seq {op} ? LIMIT 1", (thread_id, seq)
        ).fetchone()
        return row is not None

    def search_messages(
        self,
        query: str,
        *,
        thread_id: str | None = None,
        limit: int = 20,
        before_seq: int | None = None,
        order: SearchOrder = "newest",
        any_term: bool = False,
        roles: Sequence[str] = _DEFAULT_ROLES,
    ) -> list[MessageHit]:
        """Messages whose text matches `query`'s words (see `fts_query`; any author text is
        safe), in one thread or all, newest first or most relevant first. `before_seq` pages
        newest-first results. An empty or word-less query finds nothing."""
        match = fts_query(query, any_term=any_term)
        if match is None or not roles:
            return []
        clauses = ["messages_fts MATCH ?", f"m.role IN ({','.join('?' * len(roles))})"]
        values: list[object] = [match, *roles]
        if thread_id is not None:
            clauses.append("m.thread_id = ?")
            values.append(thread_id)
        if before_seq is not None:
            clauses.append("m.seq < ?")
            values.append(before_seq)
        ordering = "m.seq DESC" if order == "newest" else "rank, m.seq DESC"
        rows = self.conn.execute(
            "SELECT m.id, m.thread_id, m.seq, m.role, m.content, m.created_at, rank,"
            " snippet(messages_fts, 0, '', '', '…', 16) AS snippet"
            " FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid"
            f" WHERE {' AND '.join(clauses)} ORDER BY {ordering} LIMIT ?",
            (*values, limit),
        ).fetchall()
        return [
            MessageHit(
                message_id=r["id"],
                thread_id=r["thread_id"],
                seq=int(r["seq"]),
                role=r["role"],
                content=r["content"],
                snippet=r["snippet"],
                created_at=r["created_at"],
                rank=float(r["rank"]),
            )
            for r in rows
        ]
