"""One sidecar per data folder: a lock file holding the owner's pid.

The lock is an OS file lock (`fcntl.flock`) on `sidecar.lock`, which the OS releases when its
process dies however it dies, so a stale lock of a dead process is simply taken over; the pid
written in the file names the live owner in the refusal. Two windows on one folder therefore
never run two schedulers (no double fires) and never write one database from two sidecars.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO

LOCK_NAME = "sidecar.lock"


class DataFolderInUseError(RuntimeError):
    """Another live sidecar owns this data folder."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        who = f"process {pid}" if pid else "another process"
        super().__init__(
            f"the data folder {folder} is in use by another Atrium ({who}); close that window, "
            "or set ATRIUM_DATA_DIR to another folder"
        )
        self.folder = folder
        self.pid = pid


class DataFolderLock:
    def __init__(self, handle: IO[str], path: Path) -> None:
        self._handle = handle
        self.path = path

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self._handle.close()


def acquire(folder: Path) -> DataFolderLock:
    """Take the folder's lock for this process.

    Raises:
        DataFolderInUseError: a live process holds it.
    """
    path = folder / LOCK_NAME
    handle = path.open("a+", encoding="utf-8")
    try:
        _lock(handle)
    except OSError as exc:
        handle.seek(0)
        text = handle.read().strip()
        handle.close()
        raise DataFolderInUseError(folder, int(text) if text.isdigit() else None) from exc
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return DataFolderLock(handle, path)


def _lock(handle: IO[str]) -> None:
    if os.name == "nt":  # pragma: no cover - exercised on Windows builds only
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
