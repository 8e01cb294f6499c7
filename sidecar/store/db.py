"""Opening the database file: pragmas, schema, and a single-writer connection."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sidecar.store.plans import PLAN_SCHEMA

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'idle',
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    parent_id TEXT REFERENCES threads(id) ON DELETE CASCADE,
    autonomous INTEGER NOT NULL DEFAULT 0
);
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
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    started_at REAL NOT NULL,
    ended_at REAL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs(thread_id, started_at);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS interrupts (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    run_id TEXT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    answer TEXT,
    created_at REAL NOT NULL,
    answered_at REAL
);
CREATE INDEX IF NOT EXISTS interrupts_pending ON interrupts(thread_id, status);
CREATE TABLE IF NOT EXISTS grants (
    thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (thread_id, server, tool)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS standing_grants (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (server, tool)
) WITHOUT ROWID;
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
CREATE TABLE IF NOT EXISTS tool_approvals (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    hash TEXT NOT NULL,
    definition TEXT NOT NULL,
    approved_at REAL NOT NULL,
    PRIMARY KEY (server, tool)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class Database:
    """The open database: its path and the sidecar's one connection (the single writer)."""

    path: Path
    conn: sqlite3.Connection

    def close(self) -> None:
        self.conn.close()


def open_database(path: Path, *, busy_timeout_ms: int = 10_000) -> Database:
    """Open (creating if needed) the database at `path` with WAL and a busy timeout.

    Raises:
        sqlite3.DatabaseError: the file exists but is not a usable SQLite database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(_SCHEMA)
    _migrate(conn)
    conn.executescript(PLAN_SCHEMA)
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
        (str(SCHEMA_VERSION),),
    )
    return Database(path=path, conn=conn)


# Columns added after version 1, as (table, column, definition).
_ADDED_COLUMNS = (
    ("threads", "parent_id", "TEXT REFERENCES threads(id) ON DELETE CASCADE"),
    ("threads", "autonomous", "INTEGER NOT NULL DEFAULT 0"),
)


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a database written by an older version up to date, in place, losing nothing."""
    for table, column, definition in _ADDED_COLUMNS:
        existing = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in existing:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
    conn.execute("CREATE INDEX IF NOT EXISTS threads_by_parent ON threads(parent_id)")
