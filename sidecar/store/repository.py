"""What every repository is: plain SQL over the sidecar's one connection (the single writer).

A repository holds no state but the connection, so any number of them may share it, and a
`Database.transaction()` around calls to several makes them one atomic write. Statements are
written so that PostgreSQL accepts them too where that costs nothing (`ON CONFLICT ... DO
UPDATE` rather than `INSERT OR REPLACE`, `COALESCE`, standard joins); what only SQLite has
(FTS5, `json_extract`, `INSERT OR IGNORE`, sqlite-vec) stays inside the repository that needs
it, so team mode (DESIGN.md §16) replaces those repositories' bodies, never their callers.
"""

from __future__ import annotations

import sqlite3


class Repository:
    """SQL for one concept on a connection it shares with the others."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
