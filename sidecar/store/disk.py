"""Telling a full disk from other failures, wherever it surfaces.

SQLite says `SQLITE_FULL` ("database or disk is full") when a write finds no room, but when it
cannot extend its shared-memory index it says `SQLITE_IOERR_SHMSIZE`, and a plain file write
raises `OSError(ENOSPC)` (or `EDQUOT`, a quota). `full_disk_folder` recognizes all of them, in
an exception or anything it was raised from, and names the folder whose disk is full.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

SQLITE_FULL = 13
SQLITE_IOERR = 10
NO_ROOM_BYTES = 1 << 20
"""An I/O error with less than this free counts as a full disk: SQLite reports some of its
writes that found no room as a plain I/O error."""


class DiskFullError(Exception):
    """The disk holding `folder` has no room for a write that had to happen."""

    def __init__(self, folder: Path) -> None:
        super().__init__(f"the disk holding {folder} is full")
        self.folder = folder


def full_disk_folder(exc: BaseException, database_folder: Path) -> Path | None:
    """The folder whose disk is full, if `exc` (or its cause or context) is a write that found
    no room; else None. A SQLite error is about `database_folder`; an `OSError` about the folder
    of the file it names (`database_folder` when it names none)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        folder = _full_folder(current, database_folder)
        if folder is not None:
            return folder
        current = current.__cause__ or current.__context__
    return None


def _full_folder(exc: BaseException, database_folder: Path) -> Path | None:
    if isinstance(exc, DiskFullError):
        return exc.folder
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code == SQLITE_FULL or (code == SQLITE_IOERR and no_room(database_folder)):
            return database_folder
        return None
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        named = exc.filename
        if isinstance(named, str | Path):
            return Path(named).parent
        return database_folder
    return None


def no_room(folder: Path) -> bool:
    """Less than `NO_ROOM_BYTES` free on the disk holding `folder` (False when unknown)."""
    try:
        return shutil.disk_usage(folder).free < NO_ROOM_BYTES
    except OSError:
        return False
