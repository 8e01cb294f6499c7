"""Is the database file whole? Checked at start-up before anything opens it for writing.

SQLite, handed a damaged file, either serves it (a garbage page is read and written around) or
starts over (an empty file becomes a fresh database and the write-ahead log beside it is thrown
away). `check_database` looks first, writing nothing:

- **Missing file**: a fresh install, unless a write-ahead log with frames lies beside it.
- **Empty file** (0 bytes): a fresh install only when nothing shows the folder was used: it is
  *emptied* when its `-wal` holds frames, when `backups/` holds a backup, or when the marker
  `storage.json` (written once a database has been opened there) exists.
- **Header**: a non-empty file must start with the 16 bytes `SQLite format 3\\0`, declare a page
  size (a power of two, 512 to 65536) and be a whole number of pages long.
- **Write-ahead log**: a `-wal` at least as long as its 32-byte header must start with one of
  the two WAL magic numbers and declare a valid page size.
- **`PRAGMA quick_check`** over a read-only connection (`mode=ro`, or `immutable=1` when no
  log holds frames, so that no `-wal`/`-shm` appears), within a deadline: a database too large
  to check in time is logged and used.

Any of these found wrong raises `DatabaseDamagedError`; a check that failed for want of space
raises `DiskFullError`. The file is never changed.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from sidecar.store.disk import DiskFullError, full_disk_folder
from sidecar.store.files import DatabaseFiles

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_MAGICS = (0x377F0682, 0x377F0683)
HEADER_BYTES = 100
WAL_HEADER_BYTES = 32
QUICK_CHECK_DEADLINE_S = 30.0
PROGRESS_OPS = 10_000
"""How many SQLite VM steps run between deadline checks."""
MARKER_NAME = "storage.json"
"""Written beside a database once it has been opened: the folder has been used."""


class DatabaseDamagedError(Exception):
    """The database file is damaged or emptied; it was not touched."""

    def __init__(self, path: Path, problem: str, detail: str) -> None:
        super().__init__(f"the database {path} is {problem}: {detail}")
        self.path = path
        self.problem = problem
        self.detail = detail


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What `check_database` found fine: `fresh` (no database yet), `checked` (quick_check
    finished in time)."""

    fresh: bool
    checked: bool


def check_database(path: Path, *, deadline_s: float = QUICK_CHECK_DEADLINE_S) -> CheckReport:
    """Check the database file at `path` without writing to it (blocking: call off the loop).

    Raises:
        DatabaseDamagedError: the file is damaged or emptied.
        DiskFullError: the check could not run for want of space.
    """
    files = DatabaseFiles(path)
    wal_size = _size(files.wal)
    size = _size(path)
    if size is None:
        if wal_size:
            raise DatabaseDamagedError(
                path,
                "damaged",
                f"the file is missing but its write-ahead log {files.wal.name} "
                f"holds {_bytes(wal_size)}",
            )
        return CheckReport(fresh=True, checked=False)
    if size == 0:
        _check_empty(files, wal_size or 0)
        return CheckReport(fresh=True, checked=False)
    _check_header(path, size)
    if wal_size and wal_size >= WAL_HEADER_BYTES:
        _check_wal(files)
    return CheckReport(fresh=False, checked=_quick_check(files, bool(wal_size), deadline_s))


def _check_empty(files: DatabaseFiles, wal_size: int) -> None:
    path = files.database
    if wal_size:
        raise DatabaseDamagedError(
            path,
            "emptied",
            f"the file is empty (0 bytes) but its write-ahead log "
            f"{files.wal.name} holds {_bytes(wal_size)}: the data it held is not in it",
        )
    if files.backups():
        raise DatabaseDamagedError(
            path,
            "emptied",
            f"the file is empty (0 bytes) but {files.backup_dir} holds backups "
            "of it: it held data before",
        )
    if (path.parent / MARKER_NAME).exists():
        raise DatabaseDamagedError(
            path,
            "emptied",
            f"the file is empty (0 bytes) but this folder's {MARKER_NAME} says "
            "a database was used here",
        )


def _check_header(path: Path, size: int) -> None:
    try:
        with path.open("rb") as handle:
            header = handle.read(HEADER_BYTES)
    except OSError as exc:
        raise DatabaseDamagedError(path, "damaged", f"it cannot be read ({exc})") from exc
    if not header.startswith(SQLITE_MAGIC):
        raise DatabaseDamagedError(
            path, "damaged", f"it does not start with the SQLite header (found {header[:16]!r})"
        )
    if len(header) < HEADER_BYTES:
        raise DatabaseDamagedError(path, "damaged", f"it is cut short ({size} bytes)")
    page_size = _page_size(int.from_bytes(header[16:18], "big"))
    if page_size is None:
        raise DatabaseDamagedError(path, "damaged", "its header declares no valid page size")
    if size % page_size:
        raise DatabaseDamagedError(
            path, "damaged", f"it is not a whole number of {page_size}-byte pages ({size} bytes)"
        )


def _check_wal(files: DatabaseFiles) -> None:
    try:
        with files.wal.open("rb") as handle:
            header = handle.read(WAL_HEADER_BYTES)
    except OSError as exc:
        raise DatabaseDamagedError(
            files.database, "damaged", f"its write-ahead log cannot be read ({exc})"
        ) from exc
    magic = int.from_bytes(header[:4], "big")
    if magic not in WAL_MAGICS or _page_size(int.from_bytes(header[8:12], "big")) is None:
        raise DatabaseDamagedError(
            files.database, "damaged", f"its write-ahead log {files.wal.name} has no valid header"
        )


def _page_size(raw: int) -> int | None:
    size = 65536 if raw == 1 else raw
    if 512 <= size <= 65536 and size & (size - 1) == 0:
        return size
    return None


def _quick_check(files: DatabaseFiles, has_wal: bool, deadline_s: float) -> bool:
    """Run `PRAGMA quick_check` read-only; False when the deadline cut it short.

    Raises:
        DatabaseDamagedError, DiskFullError.
    """
    path = files.database
    shm_existed = files.shm.exists()
    mode = "mode=ro" if has_wal else "mode=ro&immutable=1"
    deadline = time.monotonic() + deadline_s
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
        try:
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_OPS)
            rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check(20)")]
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if time.monotonic() > deadline and "interrupt" in str(exc):
            log.warning("quick_check of %s did not finish in %.0f s; using it", path, deadline_s)
            return False
        raise _failure(path, exc) from exc
    except sqlite3.DatabaseError as exc:
        raise _failure(path, exc) from exc
    finally:
        if has_wal and not shm_existed:
            files.shm.unlink(missing_ok=True)  # the read-only check's, made just now
    if rows != ["ok"]:
        raise DatabaseDamagedError(path, "damaged", "quick_check found: " + "; ".join(rows[:5]))
    return True


def _failure(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    folder = full_disk_folder(exc, path.parent)
    if folder is not None:
        return DiskFullError(folder)
    return DatabaseDamagedError(path, "damaged", f"SQLite cannot read it ({exc})")


def mark_used(folder: Path) -> None:
    """Record that a database was opened in `folder` (see the empty-file rule); a marker that
    cannot be written (a full disk) is only logged."""
    marker = folder / MARKER_NAME
    if marker.exists():
        return
    try:
        marker.write_text(json.dumps({"database_opened_at": time.time()}), encoding="utf-8")
    except OSError as exc:
        log.warning("could not write %s: %s", marker, exc)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _bytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size} bytes"
