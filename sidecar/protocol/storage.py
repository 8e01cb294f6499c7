"""What the sidecar and the window agree on about the database file, besides frames.

A sidecar that will not open its database (damaged, emptied, or on a full disk) exits with
`EXIT_REFUSED` (`sidecar.protocol.process`). Just before its `atrium: refused: <reason>` line it
writes one `atrium: storage: <json>` line, a `StorageRefusal`: what is wrong, the file, and the
backups there are to restore. The window offers the two ways out and starts the sidecar once
more with one of the repair flags below; the sidecar moves the files itself (under its data
folder lock), so the window never touches the database.
"""

from __future__ import annotations

import json
from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.models_base import WireModel
from sidecar.protocol.process import REFUSED_PREFIX

START_FRESH_FLAG = "--start-fresh"
"""Sidecar flag: move the database and its `-wal`/`-shm` aside, then start with a new one."""
RESTORE_BACKUP_FLAG = "--restore-backup"
"""Sidecar flag with a backup's path: move the database aside, copy the backup in, start."""

STORAGE_PREFIX = "atrium: storage: "
MAX_LISTED_BACKUPS = 20
"""A refusal lists at most this many backups (the newest), so its line fits the stderr tail the
window keeps."""

StorageProblem: TypeAlias = Literal["damaged", "emptied", "disk_full"]
"""`damaged`: the file is not a whole SQLite database (its header, size, write-ahead log or
`PRAGMA quick_check` says so). `emptied`: the file is empty but the folder shows it held data.
`disk_full`: the disk holding the data folder has no room to start."""


class BackupInfo(WireModel):
    path: str
    taken_at: float = Field(description="When it was taken, seconds since the epoch (UTC).")
    size: int = Field(description="Bytes.")


class StorageRefusal(WireModel):
    problem: StorageProblem
    database: str = Field(description="The database file's path.")
    detail: str = Field(description="What was found, for the author.")
    backups: list[BackupInfo] = Field(
        default_factory=list[BackupInfo],
        max_length=MAX_LISTED_BACKUPS,
        description="Backups to restore, newest first.",
    )


def storage_line(refusal: StorageRefusal) -> str:
    """The stderr line that carries `refusal` (written just before the refused line)."""
    return STORAGE_PREFIX + refusal.model_dump_json() + "\n"


def storage_refusal(stderr_tail: str) -> StorageRefusal | None:
    """The storage refusal of the last refusal in `stderr_tail`: the storage line right before
    the last `atrium: refused:` line, if there is one (an earlier start's is not it)."""
    lines = stderr_tail.splitlines()
    refused = [i for i, line in enumerate(lines) if line.startswith(REFUSED_PREFIX)]
    if not refused or refused[-1] == 0:
        return None
    before = lines[refused[-1] - 1]
    if not before.startswith(STORAGE_PREFIX):
        return None
    try:
        return StorageRefusal.model_validate(json.loads(before[len(STORAGE_PREFIX) :]))
    except ValueError:  # pydantic's ValidationError is one
        return None


def disk_full_message(folder: str) -> str:
    """The message of a `DISK_FULL` error and of a start refused for want of space."""
    return f"the disk holding {folder} is full: free space and retry"
