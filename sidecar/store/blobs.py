"""Content-addressed file images for undo: `<data>/undo/blobs/ab/cdef…`, named by the sha256 of
their bytes, so a file's content is stored once however many turns hold it.

A blob is written to a temporary file beside it and renamed into place, so a blob that exists is
whole. Everything here is blocking file I/O: callers run it off the event loop.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

_CHUNK = 1 << 20


def blob_root(database_path: Path) -> Path:
    """Where the blobs of the database at `database_path` live (beside it, in its data folder)."""
    return database_path.parent / "undo" / "blobs"


def file_hash(path: Path) -> str | None:
    """The sha256 of a regular file's bytes, or None when there is no such file."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return digest.hexdigest()


def replace_atomically(target: Path, data: bytes) -> None:
    """Write `data` to `target` through a temporary file in the same folder and a rename: a crash
    leaves the old file or the new one, never a mix."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".atrium-undo-", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class BlobStore:
    """The blob folder: `keep` a file's bytes, `read` them back by hash."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def keep(self, source: Path) -> str | None:
        """Store `source`'s bytes (once) and return their hash; None when it does not exist."""
        try:
            data = source.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        return self.keep_bytes(data)

    def keep_bytes(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.path_of(digest)
        if not target.exists():
            replace_atomically(target, data)
        return digest

    def read(self, digest: str) -> bytes:
        """The bytes stored under `digest`.

        Raises:
            FileNotFoundError: no such blob (removed by hand).
        """
        return self.path_of(digest).read_bytes()

    def total_bytes(self) -> int:
        """The bytes the blobs take (what the author's undo history costs on disk)."""
        if not self.root.exists():
            return 0
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
