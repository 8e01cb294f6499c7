"""The tools a thread has loaded: what its model found with `atrium__tool_search` or named in
a call, newest first. Past a share of the model's window a request carries these (as many as
fit) beside the core tools instead of every definition (`sidecar.context.tool_search`); kept
here, the set outlives the turn and a restart.

Each load takes the thread's next number, so "newest" is exact within one search's results
(loaded best match last, it comes first) and across restarts, where clocks may step back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

from sidecar.store.repository import Repository

LOADED_TOOL_SCHEMA = """
CREATE TABLE IF NOT EXISTS loaded_tools (
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    reason TEXT NOT NULL,
    seq INTEGER NOT NULL,
    loaded_at REAL NOT NULL,
    PRIMARY KEY (thread_id, name)
);
"""

LoadReason = Literal["found", "named"]
"""Why a tool is loaded: a search found it, or the model named it in a call."""


class LoadedToolRepo(Repository):
    def load_tools(self, thread_id: str, names: Sequence[str], reason: LoadReason) -> None:
        """Load `names` for the thread, the last one newest (a tool loaded before moves up). A
        thread that does not exist loads nothing."""
        for name in names:
            self.conn.execute(
                "INSERT INTO loaded_tools(thread_id, name, reason, seq, loaded_at)"
                " SELECT ?, ?, ?,"
                " (SELECT COALESCE(MAX(seq), 0) + 1 FROM loaded_tools WHERE thread_id = ?), ?"
                " WHERE EXISTS (SELECT 1 FROM threads WHERE id = ?)"
                " ON CONFLICT (thread_id, name) DO UPDATE"
                " SET reason = excluded.reason, seq = excluded.seq, loaded_at = excluded.loaded_at",
                (thread_id, name, reason, thread_id, time.time(), thread_id),
            )

    def loaded_tools(self, thread_id: str, limit: int = 256) -> list[str]:
        """The thread's loaded tools, newest first."""
        rows = self.conn.execute(
            "SELECT name FROM loaded_tools WHERE thread_id = ? ORDER BY seq DESC LIMIT ?",
            (thread_id, limit),
        ).fetchall()
        return [str(row[0]) for row in rows]
