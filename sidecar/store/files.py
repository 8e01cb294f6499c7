"""The database's files on disk: the file, its `-wal` and `-shm`, its backups folder, and the two
ways out of a damaged file (set it aside; restore a backup in its place).

Files are only ever renamed within the data folder (atomic, nothing copied over the damaged
file): a damaged database is kept, under a timestamped name, for whoever wants to rescue it.
The caller holds the data folder's lock, so no other sidecar has the files open.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)

DATABASE_NAME = "atrium.db"
BACKUPS_DIR = "backups"
"""The automatic backups' folder, beside the database."""
BACKUP_PREFIX = "atrium-"
BACKUP_SUFFIX = ".db"
"""A backup is `backups/atrium-<UTC time as TIME_FORMAT>.db`."""
SET_ASIDE_PREFIX = "atrium.set-aside-"
"""A database moved aside is `atrium.set-aside-<UTC time>.db` (with its `-wal` and `-shm`)."""
TIME_FORMAT = "%Y%m%dT%H%M%SZ"
SIDE_SUFFIXES = ("-wal", "-shm")


@dataclass(frozen=True, slots=True)
class Backup:
    path: Path
    taken_at: float
    """Seconds since the epoch, from the name."""
    size: int


@dataclass(frozen=True, slots=True)
class DatabaseFiles:
    """The files of the database at `database`."""

    database: Path

    @property
    def wal(self) -> Path:
        return self.database.with_name(self.database.name + "-wal")

    @property
    def shm(self) -> Path:
        return self.database.with_name(self.database.name + "-shm")

    @property
    def backup_dir(self) -> Path:
        return self.database.parent / BACKUPS_DIR

    def backups(self) -> list[Backup]:
        """The backups in `backup_dir`, newest first (names that do not parse are not ours)."""
        found: list[Backup] = []
        try:
            entries = list(self.backup_dir.iterdir())
        except OSError:
            return []
        for entry in entries:
            taken = backup_time(entry)
            if taken is None:
                continue
            try:
                size = entry.stat().st_size
            except OSError:
                continue
            found.append(Backup(entry, taken, size))
        return sorted(found, key=lambda b: b.taken_at, reverse=True)

    def backup_path(self, now: float) -> Path:
        return self.backup_dir / f"{BACKUP_PREFIX}{stamp(now)}{BACKUP_SUFFIX}"

    def set_aside(self, now: float | None = None) -> Path | None:
        """Move the database and its `-wal`/`-shm` aside under a timestamped name in the same
        folder; the new name of the database, or None when there was none.

        Raises:
            OSError: a rename failed (what was moved stays moved; nothing is deleted).
        """
        target = self._free_aside_name(time.time() if now is None else now)
        moved: Path | None = None
        if self.database.exists():
            self.database.rename(target)
            moved = target
        for suffix in SIDE_SUFFIXES:
            side = self.database.with_name(self.database.name + suffix)
            if side.exists():
                side.rename(target.with_name(target.name + suffix))
        if moved is not None:
            log.warning("moved the database %s aside to %s", self.database, moved)
        return moved

    def _free_aside_name(self, now: float) -> Path:
        base = f"{SET_ASIDE_PREFIX}{stamp(now)}"
        candidate = self.database.with_name(base + ".db")
        counter = 1
        while any(candidate.with_name(candidate.name + s).exists() for s in ("", *SIDE_SUFFIXES)):
            candidate = self.database.with_name(f"{base}-{counter}.db")
            counter += 1
        return candidate

    def put_in_place(self, backup: Path) -> None:
        """Copy `backup` to the database's place (via a temporary file, synced, then renamed);
        the current database must have been set aside first.

        Raises:
            OSError: the copy failed (the temporary file is removed; no database is in place).
        """
        partial = self.database.with_name(self.database.name + ".restoring")
        try:
            shutil.copyfile(backup, partial)
            with partial.open("rb+") as handle:
                os.fsync(handle.fileno())
            partial.replace(self.database)
        finally:
            partial.unlink(missing_ok=True)
        log.warning("restored the database %s from %s", self.database, backup)


def stamp(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime(TIME_FORMAT)


def backup_time(path: Path) -> float | None:
    """When the backup at `path` was taken, from its name; None for a name not a backup's."""
    name = path.name
    if not (name.startswith(BACKUP_PREFIX) and name.endswith(BACKUP_SUFFIX)):
        return None
    raw = name[len(BACKUP_PREFIX) : -len(BACKUP_SUFFIX)]
    try:
        return datetime.strptime(raw, TIME_FORMAT).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None
