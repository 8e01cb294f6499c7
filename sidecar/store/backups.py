"""Backups of the database with SQLite's online backup API, and their retention.

A backup is read from a connection of its own, read-only, that holds one read transaction for
the whole copy: in WAL mode that is a snapshot, so the copy is the database as of one commit
while the sidecar goes on writing (its writes neither block on the copy nor restart it). The
copy goes to `<name>.partial`, must pass `PRAGMA quick_check`, and only then takes its name, so
a backup in `backups/` is always whole. Blocking: callers run these off the event loop.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from sidecar.store.disk import DiskFullError, full_disk_folder
from sidecar.store.files import Backup, DatabaseFiles

log = logging.getLogger(__name__)

STEP_PAGES = 1024
"""Pages copied per step; between steps the copy may be stopped."""
PARTIAL_SUFFIX = ".partial"


class BackupStoppedError(Exception):
    """The backup was stopped (its deadline passed, or the sidecar is closing)."""


class BackupFailedError(Exception):
    """The backup could not be made (the database could not be read, or the copy is not whole)."""


def take_backup(files: DatabaseFiles, now: float, stop: threading.Event) -> Backup:
    """Copy the database into `files.backup_dir` as of one moment; returns the new backup.

    Raises:
        BackupStoppedError: `stop` was set before the copy finished (nothing is left behind).
        DiskFullError: no room for the copy (nothing is left behind).
        BackupFailedError: the copy failed or did not pass quick_check.
    """
    target = files.backup_path(now)
    partial = target.with_name(target.name + PARTIAL_SUFFIX)
    try:
        files.backup_dir.mkdir(exist_ok=True)
        _copy(files.database, partial, stop)
        _verify(partial)
        partial.replace(target)
    except (sqlite3.Error, OSError) as exc:
        folder = full_disk_folder(exc, files.backup_dir)
        if folder is not None:
            raise DiskFullError(folder) from exc
        raise BackupFailedError(f"backup of {files.database} failed: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    size = target.stat().st_size
    log.info("backed up %s to %s (%d bytes)", files.database, target, size)
    return Backup(target, now, size)


def _copy(database: Path, partial: Path, stop: threading.Event) -> None:
    def progress(_status: int, _remaining: int, _total: int) -> None:
        if stop.is_set():
            raise BackupStoppedError("the backup was stopped")

    source = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    source.isolation_level = None
    try:
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot
        partial.unlink(missing_ok=True)
        target = sqlite3.connect(partial)
        try:
            source.backup(target, pages=STEP_PAGES, progress=progress)
        finally:
            target.close()
    finally:
        source.close()


def _verify(partial: Path) -> None:
    conn = sqlite3.connect(f"{partial.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        rows = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
    finally:
        conn.close()
    if rows != ["ok"]:
        raise BackupFailedError("the copy did not pass quick_check: " + "; ".join(rows))


def prune(files: DatabaseFiles, keep: int) -> list[Path]:
    """Keep the newest `keep` backups (at least one), remove the older ones and any partial
    copy a killed process left; returns what was removed."""
    removed: list[Path] = []
    for backup in files.backups()[max(keep, 1) :]:
        backup.path.unlink(missing_ok=True)
        removed.append(backup.path)
    for partial in files.backup_dir.glob(f"*{PARTIAL_SUFFIX}"):
        partial.unlink(missing_ok=True)
        removed.append(partial)
    if removed:
        log.info("removed %d old backups: %s", len(removed), ", ".join(p.name for p in removed))
    return removed


def last_backup_time(files: DatabaseFiles) -> float | None:
    backups = files.backups()
    return backups[0].taken_at if backups else None


def check_backup(path: Path) -> None:
    """A backup fit to restore: a whole SQLite database.

    Raises:
        BackupFailedError: it is missing, not a database, or fails quick_check.
    """
    try:
        with path.open("rb") as handle:
            magic = handle.read(16)
        if magic != b"SQLite format 3\x00":
            raise BackupFailedError(f"{path} is not an SQLite database")
        _verify(path)
    except (OSError, sqlite3.Error) as exc:
        raise BackupFailedError(f"{path} cannot be restored: {exc}") from exc
