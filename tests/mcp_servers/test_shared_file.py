"""A SQLite file several processes open: set-up under a lock beside it, errors that say so."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import filelock
import pytest

from mcp_servers.shared_file import setting_up, setup_lock_path

REPO = Path(__file__).resolve().parents[2]


def test_a_new_file_is_made_with_its_folder_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "state.db"
    with setting_up(path, busy_timeout_ms=2_000) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 2_000
    conn.close()
    assert setup_lock_path(path) == tmp_path / "deep" / "er" / "state.db-setup.lock"


def test_a_set_up_waits_while_another_holds_the_lock_then_times_out(tmp_path: Path) -> None:
    """Another process (here: another lock on the same file) setting up holds the lock; this
    one waits its busy timeout and then says so, touching nothing."""
    path = tmp_path / "state.db"
    with (
        filelock.FileLock(setup_lock_path(path)),
        pytest.raises(filelock.Timeout),
        setting_up(path, busy_timeout_ms=50),
    ):
        pass
    assert not path.exists()


def test_a_file_that_is_not_a_database_raises_and_closes(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(sqlite3.DatabaseError), setting_up(path, busy_timeout_ms=1_000):
        pass
    assert path.read_text().startswith("these are my notes")


@pytest.mark.slow
def test_the_standalone_schedule_server_names_a_file_it_cannot_open(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 50)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_servers.schedule", "--db", str(path), "--timezone", "UTC"],
        cwd=REPO,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert f"atrium-mcp-schedule: cannot open {path}" in done.stderr
    assert "file is not a database" in done.stderr
