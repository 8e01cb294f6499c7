"""Opening the database file: pragmas, the registered schema, and a single-writer connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sidecar.store.files import DatabaseFiles
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
        Nested use is not supported.

        A write that fails for want of space (`SQLITE_FULL`) may have rolled the transaction
        back already, and a `COMMIT` can fail the same way: either way it ends rolled back, and
        the error that ended it is what is raised."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise


def open_database(path: Path, *, busy_timeout_ms: int = 10_000) -> Database:
    """Open (creating if needed) the database at `path` with WAL and a busy timeout, migrating
    a database written by an older version in place (`sidecar.store.schema`).

    An open that fails leaves no file behind that it made and left empty (a start on a full
    disk must not leave an empty database for the next start to take for an emptied one).

    Raises:
        NewerSchemaError: the file was written by a newer version (it is left untouched).
        sqlite3.DatabaseError: the file exists but is not a usable SQLite database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    files = DatabaseFiles(path)
    made = [p for p in (files.database, files.wal, files.shm) if not p.exists()]
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
        _remove_empty(files, made)
        raise
    return Database(path=path, conn=conn)


def _remove_empty(files: DatabaseFiles, made: list[Path]) -> None:
    """Remove the files a failed open made that hold nothing: the database and its log when
    empty (and then the log's index)."""
    for path in (files.wal, files.database):
        if path in made and path.exists() and path.stat().st_size == 0:
            path.unlink()
    if files.shm in made and not files.wal.exists():
        files.shm.unlink(missing_ok=True)
