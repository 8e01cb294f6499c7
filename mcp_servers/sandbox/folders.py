"""Run folders: making one per run, measuring what a run wrote, and removing old ones.

Each run gets ``<workdir>/run-<12 hex>/`` holding ``main.py`` and ``.tmp/``. The disk quota is a
total over that folder (bytes on disk and the number of entries), measured by the runner while the
run goes and once after it (RLIMIT_FSIZE caps each file on its own). Retention keeps the
``keep`` most recent run folders and removes any older than ``max_age_s``; a folder younger than
``grace_s`` is never removed (it may belong to a run in progress, here or in another server
sharing the workdir). Only ``run-*`` folders are touched. These functions block: call them off
the event loop.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

RUN_NAME = re.compile(r"run-[0-9a-f]{12}")


@dataclass(frozen=True)
class Usage:
    """What a run folder holds: bytes on disk and entries (files, folders, links)."""

    bytes: int
    entries: int


def prepare_run(workdir: Path, code: str) -> Path:
    """Create a fresh run directory with the code in ``main.py``; return its path."""
    run_dir = workdir / f"run-{secrets.token_hex(6)}"
    run_dir.mkdir(mode=0o700)
    (run_dir / ".tmp").mkdir(mode=0o700)
    (run_dir / "main.py").write_text(code, encoding="utf-8")
    return run_dir


def disk_usage(root: Path, max_entries: int) -> Usage:
    """Bytes allocated beneath ``root`` (sparse files count what they use) and entries, without
    following links; stops counting entries past ``max_entries``.

    A folder the run made unreadable is made readable again (it is the run's own), so nothing
    written can hide from the count.
    """
    total, entries = 0, 0
    pending = [str(root)]
    while pending and entries <= max_entries:
        folder = pending.pop()
        for entry in _scan(folder):
            entries += 1
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += _allocated(info)
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    return Usage(total, entries)


def _scan(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except PermissionError:
        try:
            os.chmod(folder, 0o700)
            with os.scandir(folder) as listing:
                return list(listing)
        except OSError:
            return []
    except OSError:
        return []


def _allocated(info: os.stat_result) -> int:
    blocks = getattr(info, "st_blocks", None)
    return blocks * 512 if isinstance(blocks, int) else info.st_size


def remove_run(run_dir: Path) -> None:
    """Remove a run folder and everything in it, even parts the run made read-only."""

    def make_writable_and_retry(function: object, path: str, _exc: object) -> None:
        parent = os.path.dirname(path)
        try:
            os.chmod(parent, 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass

    shutil.rmtree(run_dir, onerror=make_writable_and_retry)


def prune_runs(
    workdir: Path, *, keep: int, max_age_s: float, grace_s: float, now: float | None = None
) -> list[str]:
    """Remove old run folders of ``workdir``; return the names removed (oldest first)."""
    now = time.time() if now is None else now
    runs: list[tuple[float, Path]] = []
    try:
        listing = list(os.scandir(workdir))
    except OSError:
        return []
    for entry in listing:
        if RUN_NAME.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
            try:
                runs.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
            except OSError:
                continue
    runs.sort(key=lambda run: run[0], reverse=True)
    removed: list[str] = []
    for index, (mtime, path) in reversed(list(enumerate(runs))):
        age = now - mtime
        if age < grace_s or (index < keep and age <= max_age_s):
            continue
        remove_run(path)
        removed.append(path.name)
    return removed
