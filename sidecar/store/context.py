"""What a thread's context needs beyond its messages: compaction summaries (each naming the
message range it covers), the thread's compaction setting and channel, each turn's tokens and
cost, each thread's message count and usage totals (kept by triggers, so a turn never counts
or sums 100,000 rows; filled once from the messages and the turns' usage when the counter
first appears), and the turns that read untrusted content, by the range of messages they
wrote (a later turn whose context carries one of those messages has read it too:
`sidecar.context.taint`). The memories themselves live in LangGraph's store
(`sidecar.context.parts`)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sidecar.store.repository import Repository

CONTEXT_SCHEMA = """
CREATE TABLE IF NOT EXISTS thread_summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    from_seq INTEGER NOT NULL,
    to_seq INTEGER NOT NULL,
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    messages INTEGER NOT NULL,
    text TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS thread_summaries_by_thread ON thread_summaries(thread_id, id);
CREATE TABLE IF NOT EXISTS thread_context (
    thread_id TEXT PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
    compaction TEXT NOT NULL DEFAULT 'auto',
    compact_next INTEGER NOT NULL DEFAULT 0,
    channel TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn_usage (
    turn_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    model TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost REAL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS turn_usage_by_thread ON turn_usage(thread_id, created_at);
CREATE TABLE IF NOT EXISTS thread_message_counts (
    thread_id TEXT PRIMARY KEY,
    messages INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS thread_message_counts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO thread_message_counts(thread_id, messages) VALUES (new.thread_id, 1)
    ON CONFLICT(thread_id) DO UPDATE SET messages = messages + 1;
END;
CREATE TRIGGER IF NOT EXISTS thread_message_counts_delete AFTER DELETE ON messages BEGIN
    UPDATE thread_message_counts SET messages = messages - 1 WHERE thread_id = old.thread_id;
END;
INSERT OR REPLACE INTO thread_message_counts(thread_id, messages)
    SELECT thread_id, COUNT(*) FROM messages
    WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'thread_message_counts')
    GROUP BY thread_id;
INSERT OR IGNORE INTO meta(key, value) VALUES ('thread_message_counts', '1');
CREATE TABLE IF NOT EXISTS thread_usage_totals (
    thread_id TEXT PRIMARY KEY,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    costed INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS thread_usage_totals_insert AFTER INSERT ON turn_usage BEGIN
    INSERT INTO thread_usage_totals(thread_id, prompt_tokens, completion_tokens, cost, costed)
    VALUES (new.thread_id, new.prompt_tokens, new.completion_tokens, COALESCE(new.cost, 0),
        new.cost IS NOT NULL)
    ON CONFLICT(thread_id) DO UPDATE SET
        prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        completion_tokens = completion_tokens + excluded.completion_tokens,
        cost = cost + excluded.cost, costed = costed + excluded.costed;
END;
CREATE TRIGGER IF NOT EXISTS thread_usage_totals_delete AFTER DELETE ON turn_usage BEGIN
    UPDATE thread_usage_totals SET prompt_tokens = prompt_tokens - old.prompt_tokens,
        completion_tokens = completion_tokens - old.completion_tokens,
        cost = cost - COALESCE(old.cost, 0), costed = costed - (old.cost IS NOT NULL)
    WHERE thread_id = old.thread_id;
END;
INSERT OR REPLACE INTO thread_usage_totals(
    thread_id, prompt_tokens, completion_tokens, cost, costed)
    SELECT thread_id, SUM(prompt_tokens), SUM(completion_tokens), COALESCE(SUM(cost), 0),
        COUNT(cost) FROM turn_usage
    WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'thread_usage_totals')
    GROUP BY thread_id;
INSERT OR IGNORE INTO meta(key, value) VALUES ('thread_usage_totals', '1');
CREATE TABLE IF NOT EXISTS untrusted_turns (
    turn_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    from_seq INTEGER NOT NULL,
    to_seq INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS untrusted_turns_by_thread ON untrusted_turns(thread_id, to_seq);
"""

Compaction = Literal["auto", "off"]


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    """A compaction summary of messages `from_seq`..`to_seq` (both included) of a thread."""

    id: int
    thread_id: str
    from_seq: int
    to_seq: int
    from_id: str
    to_id: str
    messages: int
    text: str
    created_at: float


@dataclass(frozen=True, slots=True)
class ThreadContextSettings:
    compaction: Compaction = "auto"
    compact_next: bool = False
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class TurnUsage:
    turn_id: str
    thread_id: str
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    created_at: float


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A thread's turns' tokens and cost, summed; `cost` None when no turn had a known cost."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None


class ContextRepo(Repository):
    """Summaries, per-thread context settings, turn usage and message counts."""

    def latest_summary(self, thread_id: str) -> SummaryRecord | None:
        row = self.conn.execute(
            "SELECT * FROM thread_summaries WHERE thread_id = ? ORDER BY id DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
        return None if row is None else SummaryRecord(*row)

    def summaries(self, thread_id: str) -> list[SummaryRecord]:
        rows = self.conn.execute(
            "SELECT * FROM thread_summaries WHERE thread_id = ? ORDER BY id", (thread_id,)
        ).fetchall()
        return [SummaryRecord(*r) for r in rows]

    def message_count(self, thread_id: str) -> int:
        """How many messages the thread has (its counter, not a count of rows)."""
        row = self.conn.execute(
            "SELECT messages FROM thread_message_counts WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def messages_after(self, thread_id: str, seqs: Iterable[int]) -> dict[int, str]:
        """For each seq, the id of the first message after it that shows as a row of its own
        (the author's, or an answer with text): where a summary ending there gives way to the
        messages shown in full. A seq with no such message after it is left out."""
        found: dict[int, str] = {}
        for seq in set(seqs):
            row = self.conn.execute(
                "SELECT id FROM messages WHERE thread_id = ? AND seq > ? AND (role = 'user'"
                " OR (role = 'assistant' AND content != '')) ORDER BY seq LIMIT 1",
                (thread_id, seq),
            ).fetchone()
            if row is not None:
                found[seq] = str(row[0])
        return found

    def add_summary(
        self,
        thread_id: str,
        *,
        from_seq: int,
        to_seq: int,
        from_id: str,
        to_id: str,
        messages: int,
        text: str,
    ) -> SummaryRecord:
        now = time.time()
        cur = self.conn.execute(
            "INSERT INTO thread_summaries(thread_id, from_seq, to_seq, from_id, to_id, messages,"
            " text, created_at) VALUES (?,?,?,?,?,?,?,?)",
            (thread_id, from_seq, to_seq, from_id, to_id, messages, text, now),
        )
        summary_id = int(cur.lastrowid or 0)
        return SummaryRecord(
            summary_id, thread_id, from_seq, to_seq, from_id, to_id, messages, text, now
        )

    def settings(self, thread_id: str) -> ThreadContextSettings:
        row = self.conn.execute(
            "SELECT compaction, compact_next, channel FROM thread_context WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        if row is None:
            return ThreadContextSettings()
        mode: Compaction = "off" if row[0] == "off" else "auto"
        return ThreadContextSettings(mode, bool(row[1]), row[2])

    def set_compaction(
        self, thread_id: str, *, mode: Compaction | None = None, compact_next: bool | None = None
    ) -> ThreadContextSettings:
        current = self.settings(thread_id)
        self._save(
            thread_id,
            mode or current.compaction,
            current.compact_next if compact_next is None else compact_next,
            current.channel,
        )
        return self.settings(thread_id)

    def set_channel(self, thread_id: str, channel: str | None) -> ThreadContextSettings:
        current = self.settings(thread_id)
        self._save(thread_id, current.compaction, current.compact_next, channel or None)
        return self.settings(thread_id)

    def channels(self) -> dict[str, str]:
        """thread id → channel name, for every thread in a channel."""
        rows = self.conn.execute(
            "SELECT thread_id, channel FROM thread_context WHERE channel IS NOT NULL"
        ).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    def _save(self, thread_id: str, mode: str, compact_next: bool, channel: str | None) -> None:
        self.conn.execute(
            "INSERT INTO thread_context(thread_id, compaction, compact_next, channel)"
            " VALUES (?,?,?,?) ON CONFLICT(thread_id) DO UPDATE SET"
            " compaction = excluded.compaction, compact_next = excluded.compact_next,"
            " channel = excluded.channel",
            (thread_id, mode, int(compact_next), channel),
        )

    def record_usage(
        self,
        turn_id: str,
        thread_id: str,
        *,
        model: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        cost: float | None,
    ) -> TurnUsage:
        """A turn's usage, written once (a resumed turn that persists again changes nothing)."""
        now = time.time()
        self.conn.execute(
            "INSERT OR IGNORE INTO turn_usage(turn_id, thread_id, model, prompt_tokens,"
            " completion_tokens, cost, created_at) VALUES (?,?,?,?,?,?,?)",
            (turn_id, thread_id, model, prompt_tokens, completion_tokens, cost, now),
        )
        return TurnUsage(turn_id, thread_id, model, prompt_tokens, completion_tokens, cost, now)

    def mark_untrusted(
        self, turn_id: str, thread_id: str, *, from_seq: int, to_seq: int, reason: str
    ) -> None:
        """Record that the turn whose messages are `from_seq`..`to_seq` had read untrusted
        content, and why (once: a persist that runs again changes nothing)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO untrusted_turns(turn_id, thread_id, from_seq, to_seq, reason)"
            " VALUES (?,?,?,?,?)",
            (turn_id, thread_id, from_seq, to_seq, reason),
        )

    def untrusted_within(self, thread_id: str, spans: Iterable[tuple[int, int]]) -> str | None:
        """Why messages of the thread within any of `spans` (seq ranges, both ends included)
        carry untrusted content: the reason of a turn that read some and wrote there; None when
        none did. One index lookup per span."""
        for low, high in spans:
            row = self.conn.execute(
                "SELECT reason FROM untrusted_turns WHERE thread_id = ? AND to_seq >= ?"
                " AND from_seq <= ? LIMIT 1",
                (thread_id, low, high),
            ).fetchone()
            if row is not None:
                return str(row[0])
        return None

    def usage_totals(self, thread_id: str) -> UsageTotals:
        """The thread's usage summed (kept by triggers: one row read, however many turns)."""
        row = self.conn.execute(
            "SELECT prompt_tokens, completion_tokens, cost, costed FROM thread_usage_totals"
            " WHERE thread_id = ?",
            (thread_id,),
        ).fetchone()
        if row is None:
            return UsageTotals()
        return UsageTotals(int(row[0]), int(row[1]), float(row[2]) if row[3] else None)

    def usage(self, thread_id: str) -> list[TurnUsage]:
        rows = self.conn.execute(
            "SELECT turn_id, thread_id, model, prompt_tokens, completion_tokens, cost, created_at"
            " FROM turn_usage WHERE thread_id = ? ORDER BY created_at",
            (thread_id,),
        ).fetchall()
        return [TurnUsage(*r) for r in rows]
