"""Watching the files an agent's write touches, so the undo log holds their before- and
after-images (`sidecar.store.undo`, `sidecar.store.blobs`).

`watch_files` keeps each file's bytes before the write (as a blob) and `FileWatch.done` after
it, recording a change for each file whose bytes differ. Hashing and copying run in a worker
thread under a deadline, never on the event loop; the rows are written on the caller's thread
(the store's one connection).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypeVar

from sidecar.store.blobs import BlobStore, blob_root
from sidecar.store.db import Database
from sidecar.store.undo import UndoRepo

WORKSPACE_SERVER = "workspace"
"""The built-in server whose writing tools are watched (its calls are undoable)."""

PATH_ARGUMENTS = ("path", "source", "destination")
"""The arguments of a workspace tool that name a file it may change."""

IMAGE_SECONDS = 30.0
"""How long keeping the images of one call's files may take."""

T = TypeVar("T")
log = logging.getLogger(__name__)


def undo_log(db: Database) -> tuple[UndoRepo, BlobStore]:
    """The undo log and blob folder of the open database."""
    return UndoRepo(db.conn), BlobStore(blob_root(db.path))


async def off_loop(step: Callable[[], T], seconds: float = IMAGE_SECONDS) -> T:
    """Run blocking file work in a worker thread, waiting at most `seconds`.

    Raises:
        TimeoutError: past the deadline.
    """
    async with asyncio.timeout(seconds):
        return await asyncio.to_thread(step)


def relative_path(root: Path, name: str) -> str | None:
    """`name` (relative to `root` or absolute inside it) as a POSIX path under `root`, or None
    when it is not inside."""
    candidate = Path(name)
    full = candidate if candidate.is_absolute() else root / candidate
    try:
        relative = full.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return None
    text = PurePosixPath(*relative.parts).as_posix()
    return text if text not in ("", ".") else None


@dataclass(slots=True)
class FileWatch:
    """The before-images of one write's files; `done` records what changed."""

    repo: UndoRepo
    blobs: BlobStore
    thread_id: str
    turn_id: str
    root: Path
    source: str
    before: dict[str, str | None]

    async def done(self, only: Iterable[str] | None = None) -> list[str]:
        """Keep the after-images and record each file that changed (of `only`, when given);
        returns the paths recorded."""
        paths = list(self.before) if only is None else [p for p in only if p in self.before]
        try:
            after = await off_loop(lambda: {p: self.blobs.keep(self.root / p) for p in paths})
        except (TimeoutError, OSError):
            # The write itself stands; only its undo is lost, and the log says so.
            log.warning("undo: after-images of %s not kept", paths, exc_info=True)
            return []
        changed = [p for p in paths if after[p] != self.before[p]]
        for path in changed:
            self.repo.record_change(
                self.thread_id,
                self.turn_id,
                root=str(self.root),
                path=path,
                before_hash=self.before[path],
                after_hash=after[path],
                source=self.source,
            )
        return changed


async def watch_files(
    db: Database, thread_id: str, root: Path, names: Iterable[str], *, source: str
) -> FileWatch | None:
    """Keep the before-images of `names` (paths under `root`) for the thread's current turn;
    None when there is nothing to watch (no turn yet, no path inside the workspace)."""
    repo, blobs = undo_log(db)
    turn_id = repo.current_turn(thread_id)
    paths = [p for p in (relative_path(root, n) for n in names) if p is not None]
    if turn_id is None or not paths:
        return None
    try:
        before = await off_loop(lambda: {p: blobs.keep(root / p) for p in dict.fromkeys(paths)})
    except (TimeoutError, OSError):
        log.warning("undo: before-images of %s not kept", paths, exc_info=True)
        return None
    return FileWatch(repo, blobs, thread_id, turn_id, root, source, before)


async def watch_tool_call(
    db: Database, thread_id: str, root: Path, server: str, arguments: Mapping[str, object]
) -> FileWatch | None:
    """A watch over the files a writing workspace tool's call names; None for another server."""
    if server != WORKSPACE_SERVER:
        return None
    names = [str(arguments[k]) for k in PATH_ARGUMENTS if isinstance(arguments.get(k), str)]
    return await watch_files(db, thread_id, root, names, source=server)
