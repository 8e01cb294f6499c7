"""The tool journal: a write is recorded before it runs (intent) and after (result), keyed so
that a re-run node finds the result instead of running the call again."""

from __future__ import annotations

import json
import time
from typing import Any, cast

from sidecar.store.records import JournalRecord
from sidecar.store.repository import Repository

JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_journal (
    key TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    created_at REAL NOT NULL,
    finished_at REAL
);
"""


class JournalRepo(Repository):
    def journal_intent(
        self, key: str, thread_id: str, server: str, tool: str, arguments: dict[str, Any]
    ) -> None:
        """Record that a call is about to run (before it runs)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO tool_journal(key, thread_id, server, tool, arguments, status,"
            " created_at) VALUES (?,?,?,?,?,'intent',?)",
            (key, thread_id, server, tool, json.dumps(arguments), time.time()),
        )

    def journal_result(self, key: str, result: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE tool_journal SET status = 'done', result = ?, finished_at = ? WHERE key = ?",
            (json.dumps(result), time.time(), key),
        )

    def journal_entry(self, key: str) -> JournalRecord | None:
        row = self.conn.execute("SELECT * FROM tool_journal WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return JournalRecord(
            key=row["key"],
            thread_id=row["thread_id"],
            server=row["server"],
            tool=row["tool"],
            arguments=cast(dict[str, Any], json.loads(row["arguments"])),
            status=row["status"],
            result=cast(dict[str, Any], json.loads(row["result"])) if row["result"] else None,
        )
