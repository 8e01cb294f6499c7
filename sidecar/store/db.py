"""Opening the database file: pragmas, the registered schema, and a single-writer connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sidecar.store.schema import (
    REGISTRY,
    SCHEMA_VERSION,
    NewerSchemaError,
    apply,
    check_versions,
    stored_version,
)

__all__ = [
    "SCHEMA_VERSION",
    "Database",
    "NewerSchemaError",
    "open_database",
    "stored_version",
]


@dataclass(frozen=True, slots=True)
class Database:
    """The open database: its path and the sidecar's one connection (the single writer)."""

    path: Path
    conn: sqlite3.Connection

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Generator[None]:
        """One atomic write: every repository call inside it commits together or not at all.
        Nested use is not supported."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")


def open_database(path: Path, *, busy_timeout_ms: int = 10_000) -> Database:
    """Open (creating if needed) the database at `path` with WAL and a busy timeout, migrating
    a database written by an older version in place (`sidecar.store.schema`).

    Raises:
        NewerSchemaError: the file was written by a newer version (it is left untouched).
        sqlite3.DatabaseError: the file exists but is not a usable SQLite database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        found = check_versions(conn, path)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        for part in REGISTRY:
            if part.at_open:
                apply(conn, part, found[part.name])
    except BaseException:
        conn.close()
        raise
    return Database(path=path, conn=conn)
