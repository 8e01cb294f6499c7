"""What a folder held at one moment: each file's content digest, size and mode, by relative path.

The manifest of the base an isolated copy was made from is what its changeset is computed
against, and what applying checks the workspace against (a workspace file whose digest is no
longer the base's was changed by the author meanwhile). Symbolic links are recorded by their
target, never followed. Paths are POSIX-style and relative to the folder's root.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

from sidecar.plans.review.limits import Deadline, ReviewError

SKIPPED_DIRS = frozenset({".git"})
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file: sha256 of its bytes (of its target for a symlink), size, executable bit."""

    digest: str
    size: int
    executable: bool = False
    link: str | None = None


Manifest = dict[str, FileEntry]


def entry_for(path: Path) -> FileEntry | None:
    """The entry of the file at `path`; None when nothing (or a directory) is there."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        return FileEntry(hashlib.sha256(target.encode()).hexdigest(), len(target), link=target)
    if not stat.S_ISREG(info.st_mode):
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    executable = bool(info.st_mode & stat.S_IXUSR)
    return FileEntry(digest.hexdigest(), info.st_size, executable)


def scan_tree(
    root: Path,
    deadline: Deadline,
    *,
    max_files: int | None = None,
    max_bytes: int | None = None,
) -> Manifest:
    """Every regular file and symlink under `root` (`.git` folders skipped, links not followed).

    Raises:
        ReviewError: more than `max_files` files or `max_bytes` bytes.
        ReviewTimeoutError: past the deadline.
    """
    manifest: Manifest = {}
    total = 0
    for folder, dirs, files in os.walk(root):
        deadline.check()
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = Path(folder)
        for name in sorted(files):
            entry = entry_for(base / name)
            if entry is None:
                continue
            manifest[(base / name).relative_to(root).as_posix()] = entry
            total += entry.size
            if max_files is not None and len(manifest) > max_files:
                raise ReviewError(f"more than {max_files} files to copy")
            if max_bytes is not None and total > max_bytes:
                raise ReviewError(f"more than {max_bytes // (1 << 20)} MiB to copy")
        # Symlinks to folders are listed among dirs by os.walk (and not descended into).
        for name in list(dirs):
            if (base / name).is_symlink():
                dirs.remove(name)
                entry = entry_for(base / name)
                if entry is not None:
                    manifest[(base / name).relative_to(root).as_posix()] = entry
    return manifest


def scan_paths(root: Path, paths: Iterable[str], deadline: Deadline) -> Manifest:
    """The entries of the listed files under `root` (missing ones left out).

    Raises:
        ReviewTimeoutError: past the deadline.
    """
    manifest: Manifest = {}
    for rel in paths:
        deadline.check()
        entry = entry_for(root / rel)
        if entry is not None:
            manifest[rel] = entry
    return manifest


def dump(manifest: Manifest) -> str:
    return json.dumps({path: asdict(entry) for path, entry in sorted(manifest.items())})


def load(text: str) -> Manifest:
    """Raises:
    ReviewError: not a manifest written by `dump`."""
    try:
        raw = cast(dict[str, dict[str, Any]], json.loads(text))
        return {path: FileEntry(**fields) for path, fields in raw.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise ReviewError(f"the base manifest is unreadable: {exc}") from exc
