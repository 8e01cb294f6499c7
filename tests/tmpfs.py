"""A small real tmpfs to fill up: a data folder on a disk that is full.

Mounting needs root (CI runs as root); elsewhere the tests that use it skip, saying why.
"""

from __future__ import annotations

import errno
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHUNK = b"\0" * 65536


@contextmanager
def small_tmpfs(folder: Path, size_mb: int = 32) -> Iterator[Path]:
    """`folder` with a fresh tmpfs of `size_mb` mounted on it, unmounted afterwards.

    Skips the test when mounting is not permitted here."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount(8) here: a full disk needs a small tmpfs")
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def fill(folder: Path) -> Path:
    """Write a filler file in `folder` until its disk is full; the filler."""
    filler = folder / "filler.bin"
    with filler.open("wb", buffering=0) as handle:
        while True:
            try:
                handle.write(CHUNK)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    while True:  # the last pages, smaller than a chunk
        try:
            with filler.open("ab", buffering=0) as handle:
                handle.write(b"\0" * 512)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            return filler
