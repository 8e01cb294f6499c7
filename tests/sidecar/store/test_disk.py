"""Telling a full disk from other failures: SQLite's SQLITE_FULL, an OSError(ENOSPC) naming its
file, anywhere in the chain of causes, on a real full tmpfs."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from sidecar.store.disk import DiskFullError, full_disk_folder
from tests.tmpfs import fill, small_tmpfs


def test_a_write_on_a_full_disk_names_the_folder_whichever_way_it_fails(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "full", size_mb=4) as folder:
        conn = sqlite3.connect(folder / "a.db", isolation_level=None)
        try:
            conn.execute("CREATE TABLE t (x)")
            fill(folder)
            with pytest.raises(sqlite3.OperationalError) as from_sqlite:
                conn.execute("INSERT INTO t VALUES (?)", ("x" * 10_000,))
        finally:
            conn.close()
        with pytest.raises(OSError) as from_a_file:
            (folder / "sub.txt").write_bytes(b"y" * 10_000)

    assert full_disk_folder(from_sqlite.value, folder) == folder
    assert from_a_file.value.errno == errno.ENOSPC
    # A failed write names no file: the folder asked about stands in for it.
    assert full_disk_folder(from_a_file.value, tmp_path) == tmp_path
    named = OSError(errno.ENOSPC, "No space left on device", str(folder / "sub.txt"))
    assert full_disk_folder(named, tmp_path) == folder
    try:
        raise RuntimeError("wrapped") from from_sqlite.value
    except RuntimeError as wrapped:
        assert full_disk_folder(wrapped, folder) == folder


def test_other_failures_are_not_a_full_disk(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as no_table:
        conn.execute("SELECT * FROM nowhere")
    conn.close()

    assert full_disk_folder(no_table.value, tmp_path) is None
    assert full_disk_folder(OSError(errno.EACCES, "denied", "/x/y"), tmp_path) is None
    assert full_disk_folder(ValueError("no"), tmp_path) is None
    assert full_disk_folder(DiskFullError(tmp_path / "b"), tmp_path) == tmp_path / "b"
