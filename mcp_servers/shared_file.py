"""A SQLite file that several processes open: a standalone server beside another, or two at once.

Opening one new file from two processes at the same moment is not safe by itself: switching a
new file to WAL can answer "database is locked" at once, without waiting on the busy timeout, and
a server's own set-up (creating tables, applying migrations) can interleave with the other's.
`setting_up` therefore holds a file lock beside the database (`<name>-setup.lock`, `filelock`)
while the connection is made and set up; after that, SQLite's own locking with a busy timeout
is enough for writers that begin with `BEGIN IMMEDIATE`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock


def setup_lock_path(db: Path) -> Path:
    """The file lock `setting_up` holds while a process sets up `db`."""
    return db.with_name(f"{db.name}-setup.lock")


@contextmanager
def setting_up(path: Path, *, busy_timeout_ms: int) -> Generator[sqlite3.Connection]:
    """A WAL connection to `path` (made with its folder if missing), yielded under the set-up
    lock so the caller creates its tables while no other process does; closed if the caller
    raises.

    Raises:
        filelock.Timeout: the lock was not granted within the busy timeout (an `OSError`).
        sqlite3.DatabaseError: `path` is not a database.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(setup_lock_path(path), timeout=busy_timeout_ms / 1000):
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        except BaseException:
            conn.close()
            raise
