"""The conversation of record: messages appended once, read newest first for a turn's context,
in pages (a seq cursor), and by full-text search (FTS5).

`messages_fts` is an external-content FTS5 table over `messages.content` keyed by `messages.seq`,
kept in step by triggers; a database written before the index existed is backfilled once when it
is opened. Author text never reaches FTS5's query language: `fts_query` turns it into quoted
terms, so `"`, `*`, `NEAR(`, `-`, `:` and the like are searched for as words, never parsed.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from sidecar.store.records import MessageRecord, StoredToolCall
from sidecar.store.repository import Repository

MESSAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT,
    tool_call_id TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages(thread_id, seq);
CREATE INDEX IF NOT EXISTS messages_by_role ON messages(thread_id, role, seq);
"""

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


ContextRow = tuple[int, str, str, int]
"""seq, role, content, and whether the message carries tool calls (1) or not (0)."""

_CONTEXT_COLUMNS = "SELECT seq, role, content, tool_calls IS NOT NULL AND tool_calls != '[]'"
_NEWEST_AFTER = (
    f"{_CONTEXT_COLUMNS} FROM messages WHERE thread_id = ? AND seq > ? ORDER BY seq DESC"
)
_NEWEST_BETWEEN = (
    f"{_CONTEXT_COLUMNS} FROM messages WHERE thread_id = ? AND seq > ? AND seq < ?"
    " ORDER BY seq DESC"
)


class HistoryRepo(Repository):
    """The conversation of record: appended, read for a turn's context, paged and searched."""

    def add_message(
        self,
        thread_id: str,
        role: str,
        content: str,
        *,
        message_id: str | None = None,
        tool_calls: Sequence[StoredToolCall] = (),
        tool_call_id: str | None = None,
        is_error: bool = False,
    ) -> MessageRecord:
        """Append to the conversation. A given `message_id` is written at most once, so a node
        that re-runs after a crash or an interrupt does not duplicate its message."""
        record = MessageRecord(
            id=message_id or uuid.uuid4().hex,
            thread_id=thread_id,
            role=role,
            content=content,
            created_at=time.time(),
            tool_calls=tuple(tool_calls),
            tool_call_id=tool_call_id,
            is_error=is_error,
        )
        calls = json.dumps([_call_dict(c) for c in tool_calls]) if tool_calls else None
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO messages(id, thread_id, role, content, tool_calls, tool_call_id,"
            " is_error, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (
                record.id,
                thread_id,
                role,
                content,
                calls,
                tool_call_id,
                int(is_error),
                record.created_at,
            ),
        )
        if cur.rowcount == 0:
            row = self.conn.execute("SELECT * FROM messages WHERE id = ?", (record.id,)).fetchone()
            return message_record(row)
        self.conn.execute(
            "UPDATE threads SET updated_at = ? WHERE id = ?", (time.time(), thread_id)
        )
        return record

    def recent_messages(self, thread_id: str, limit: int) -> list[MessageRecord]:
        """The last `limit` messages in order (an index range scan: cost does not grow with the
        thread)."""
        rows = self.conn.execute(
            "SELECT * FROM (SELECT * FROM messages WHERE thread_id = ? ORDER BY seq DESC LIMIT ?)"
            " recent ORDER BY seq",
            (thread_id, limit),
        ).fetchall()
        return [message_record(r) for r in rows]

    def message(self, message_id: str) -> MessageRecord | None:
        row = self.conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        return message_record(row) if row is not None else None

    def has_message(self, message_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM messages WHERE id = ?", (message_id,)).fetchone()
        return row is not None

    def unanswered_tool_calls(self, thread_id: str) -> list[StoredToolCall]:
        """Tool calls of the thread's latest turn that have no result message yet.

        Every new author message closes the turn before it, so only the latest turn can hold
        open calls; scanning from its first message keeps this flat however long the thread.
        """
        row = self.conn.execute(
            "SELECT MAX(seq) FROM messages WHERE thread_id = ? AND role = 'user'", (thread_id,)
        ).fetchone()
        since = row[0] if row and row[0] is not None else 0
        rows = self.conn.execute(
            "SELECT role, tool_calls, tool_call_id FROM messages"
            " WHERE thread_id = ? AND seq >= ? ORDER BY seq",
            (thread_id, since),
        ).fetchall()
        answered = {r["tool_call_id"] for r in rows if r["role"] == "tool"}
        calls = [
            StoredToolCall(**c)
            for r in rows
            if r["tool_calls"]
            for c in cast(list[dict[str, Any]], json.loads(r["tool_calls"]))
        ]
        return [c for c in calls if c.id not in answered]

    def newest_rows(
        self, thread_id: str, *, after_seq: int, before_seq: int | None = None
    ) -> Iterator[ContextRow]:
        """The thread's messages after `after_seq` (and before `before_seq`), newest first, as
        context rows. One index range scan, read lazily: a caller that stops early reads no
        further."""
        if before_seq is None:
            cursor = self.conn.execute(_NEWEST_AFTER, (thread_id, after_seq))
        else:
            cursor = self.conn.execute(_NEWEST_BETWEEN, (thread_id, after_seq, before_seq))
        return cast(Iterator[ContextRow], cursor)

    def seq_span(
        self, thread_id: str, *, after_seq: int, before_seq: int
    ) -> tuple[int, int] | None:
        """The first and the last seq of the thread's messages between the two (both left
        out); None when there are none. Two index lookups, whatever the span."""
        low = self.conn.execute(
            "SELECT MIN(seq) FROM messages WHERE thread_id = ? AND seq > ?", (thread_id, after_seq)
        ).fetchone()[0]
        if low is None or low >= before_seq:
            return None
        high = self.conn.execute(
            "SELECT MAX(seq) FROM messages WHERE thread_id = ? AND seq < ?",
            (thread_id, before_seq),
        ).fetchone()[0]
        return int(low), int(high)

    def last_user_message_id(self, thread_id: str) -> str | None:
        """The id of the thread's newest message from the author."""
        row = self.conn.execute(
            "SELECT id FROM messages WHERE thread_id = ? AND role = 'user'"
            " ORDER BY seq DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def last_message_id_through(self, thread_id: str, seq: int) -> str | None:
        """The id of the thread's newest message at or before `seq`."""
        row = self.conn.execute(
            "SELECT id FROM messages WHERE thread_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1",
            (thread_id, seq),
        ).fetchone()
        return None if row is None else str(row[0])

    def rare_terms(self, terms: list[str]) -> list[str]:
        """The terms that match few messages (`mcp_servers.memory.selective_terms` on the
        messages' index): the ones worth an OR search of the whole history. None when every
        term is common: ranking them would read every message that has one, a cost that grows
        with the history (a turn of a 5,000-turn thread spent 70 ms on it)."""
        from mcp_servers.memory import selective_terms

        return selective_terms(self.conn, "messages_fts", terms, keep_common=False)

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


def _call_dict(call: StoredToolCall) -> dict[str, Any]:
    return {"id": call.id, "server": call.server, "tool": call.tool, "arguments": call.arguments}
