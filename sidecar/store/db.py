"""Opening the database file: pragmas, schema, and a single-writer connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sidecar.store.budgets import BUDGET_SCHEMA
from sidecar.store.context import CONTEXT_SCHEMA
from sidecar.store.heartbeat import HEARTBEAT_SCHEMA
from sidecar.store.history import create_message_index
from sidecar.store.plan_grants import PLAN_GRANT_SCHEMA
from sidecar.store.plans import PLAN_SCHEMA
from sidecar.store.queue import QUEUE_SCHEMA
from sidecar.store.uncertain import UNCERTAIN_SCHEMA

SCHEMA_VERSION = 4

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


class NewerSchemaError(RuntimeError):
    """The database was written by a newer Atrium; this one will not touch it."""

    def __init__(self, path: Path, found: int) -> None:
        super().__init__(
            f"{path} was written by a newer Atrium (database schema {found}; this version "
            f"reads up to {SCHEMA_VERSION}). Update Atrium, or set ATRIUM_DATA_DIR to another "
            "folder. Nothing was changed."
        )
        self.path = path
        self.found = found


def open_database(path: Path, *, busy_timeout_ms: int = 10_000) -> Database:
    """Open (creating if needed) the database at `path` with WAL and a busy timeout, migrating
    a database written by an older version in place.

    Raises:
        NewerSchemaError: the file was written by a newer version (it is left untouched).
        sqlite3.DatabaseError: the file exists but is not a usable SQLite database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        found = stored_version(conn)
        if found is not None and found > SCHEMA_VERSION:
            raise NewerSchemaError(path, found)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.executescript(_SCHEMA)
        _migrate(conn, found)
        conn.executescript(PLAN_SCHEMA)
        conn.executescript(PLAN_GRANT_SCHEMA)
        conn.executescript(QUEUE_SCHEMA)
        conn.executescript(HEARTBEAT_SCHEMA)
        create_message_index(conn)
        conn.executescript(UNCERTAIN_SCHEMA)
        conn.executescript(CONTEXT_SCHEMA)
        conn.executescript(BUDGET_SCHEMA)
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
    except BaseException:
        conn.close()
        raise
    return Database(path=path, conn=conn)


def stored_version(conn: sqlite3.Connection) -> int | None:
    """The schema version the file says it has; None for a new, empty file. A file with tables
    but no version (written before versions were recorded) counts as version 1."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None
    if "meta" not in tables:
        return 1
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return 1
    try:
        return int(row[0])
    except ValueError:
        return 1


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Sub-threads and autonomy: two columns on threads."""
    for column, definition in (
        ("parent_id", "TEXT REFERENCES threads(id) ON DELETE CASCADE"),
        ("autonomous", "INTEGER NOT NULL DEFAULT 0"),
    ):
        existing = {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
        if column not in existing:
            conn.execute(f"ALTER TABLE threads ADD COLUMN {column} {definition}")


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Optional plan tasks: one column on tasks (created with it when the table is new)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "tasks" not in tables:
        return
    existing = {row[1] for row in conn.execute("PRAGMA table_info(tasks)")}
    if "optional" not in existing:
        conn.execute("ALTER TABLE tasks ADD COLUMN optional INTEGER NOT NULL DEFAULT 0")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """Queued messages remember their lane (a schedule's prompt queued behind a busy thread
    still runs in the cron lane)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "queued_messages" not in tables:
        return
    existing = {row[1] for row in conn.execute("PRAGMA table_info(queued_messages)")}
    if "lane" not in existing:
        conn.execute("ALTER TABLE queued_messages ADD COLUMN lane TEXT NOT NULL DEFAULT 'main'")


# Step `v` brings a database from version v to v + 1. Tables that are new in a version need no
# step (the schema creates what is missing); a step changes what already exists.
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
}


def _migrate(conn: sqlite3.Connection, found: int | None) -> None:
    """Bring a database written by an older version up to date, in place, losing nothing: each
    step in its own transaction, with the version it reached recorded in the same one."""
    version = SCHEMA_VERSION if found is None else found
    while version < SCHEMA_VERSION:
        step = _MIGRATIONS.get(version)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if step is not None:
                step(conn)
            version += 1
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(version),),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    conn.execute("CREATE INDEX IF NOT EXISTS threads_by_parent ON threads(parent_id)")
