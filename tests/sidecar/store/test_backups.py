"""Backups with SQLite's online backup API: a whole copy as of one commit while the sidecar's
connection goes on writing; retention; setting a database aside and putting a backup in its
place."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from sidecar.store import Store, open_database
from sidecar.store import backups as backups_mod
from sidecar.store.backups import (
    PARTIAL_SUFFIX,
    BackupFailedError,
    BackupStoppedError,
    check_backup,
    prune,
    take_backup,
)
from sidecar.store.files import DatabaseFiles
from tests.sidecar.store.damage import database_with_threads, garbage_page, snapshot

NOW = 1_700_000_000.0
DAY = 86_400.0


class _WriteBetweenSteps(threading.Event):
    """A stop signal that, each time the copy looks at it (once per step), lets the writer
    commit one transaction and waits for it: writes land in the middle of the copy, every
    time."""

    def __init__(self, turn: threading.Event, done: threading.Event) -> None:
        super().__init__()
        self.turn = turn
        self.done = done
        self.steps = 0

    def is_set(self) -> bool:
        self.steps += 1
        self.done.clear()
        self.turn.set()
        assert self.done.wait(10), "the writer did not commit"
        return False


def _pairs(conn: sqlite3.Connection, thread_id: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM messages WHERE thread_id = ?", (thread_id,)
    ).fetchone()[0]


def test_a_backup_taken_while_the_sidecar_writes_is_whole_and_as_of_one_commit(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database_with_threads(db_path, threads=2, messages=300)
    monkeypatch.setattr(backups_mod, "STEP_PAGES", 8)
    store = Store(open_database(db_path))
    thread = store.create_thread("written during the backup")
    turn, done, stop_writing = threading.Event(), threading.Event(), threading.Event()
    committed: list[int] = []

    def writer() -> None:
        while turn.wait(10) and not stop_writing.is_set():
            turn.clear()
            with store.transaction():  # two messages per commit: a copy holds an even count
                store.add_message(thread.id, "user", "first " * 50)
                store.add_message(thread.id, "assistant", "second " * 50)
            committed.append(1)
            done.set()

    worker = threading.Thread(target=writer)
    worker.start()
    gate = _WriteBetweenSteps(turn, done)
    try:
        backup = take_backup(DatabaseFiles(db_path), NOW, gate)
    finally:
        stop_writing.set()
        turn.set()
        worker.join()
    try:
        assert gate.steps > 5 and len(committed) == gate.steps
        copy = sqlite3.connect(f"{backup.path.as_uri()}?mode=ro", uri=True)
        try:
            assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            in_copy = _pairs(copy, thread.id)
        finally:
            copy.close()
        assert in_copy % 2 == 0
        assert in_copy < _pairs(store.db.conn, thread.id) == 2 * len(committed)
        assert backup.path == DatabaseFiles(db_path).backup_path(NOW)
        assert not list(backup.path.parent.glob(f"*{PARTIAL_SUFFIX}"))
    finally:
        store.db.close()


def test_a_stopped_backup_leaves_nothing_behind(db_path: Path) -> None:
    database_with_threads(db_path)
    stop = threading.Event()
    stop.set()
    files = DatabaseFiles(db_path)

    with pytest.raises(BackupStoppedError):
        take_backup(files, NOW, stop)

    assert list(files.backup_dir.iterdir()) == []


def test_a_damaged_database_makes_no_backup(db_path: Path) -> None:
    database_with_threads(db_path)
    garbage_page(db_path)
    files = DatabaseFiles(db_path)

    with pytest.raises(BackupFailedError):
        take_backup(files, NOW, threading.Event())

    assert list(files.backup_dir.iterdir()) == []


def test_retention_keeps_the_newest_and_removes_the_rest_and_partial_copies(db_path: Path) -> None:
    database_with_threads(db_path, threads=1, messages=1)
    files = DatabaseFiles(db_path)
    for day in range(5):
        take_backup(files, NOW + day * DAY, threading.Event())
    leftover = files.backup_dir / ("atrium-x.db" + PARTIAL_SUFFIX)
    leftover.write_bytes(b"half")

    removed = prune(files, keep=2)

    assert [b.taken_at for b in files.backups()] == [NOW + 4 * DAY, NOW + 3 * DAY]
    assert len(removed) == 4 and leftover in removed
    assert sorted(p.name for p in files.backup_dir.iterdir()) == sorted(
        b.path.name for b in files.backups()
    )


def test_setting_aside_moves_the_database_with_its_log_under_a_timestamped_name(
    db_path: Path,
) -> None:
    database_with_threads(db_path)
    files = DatabaseFiles(db_path)
    files.wal.write_bytes(b"log")
    files.shm.write_bytes(b"index")
    before = snapshot(db_path.parent)

    moved = files.set_aside(NOW)

    assert moved is not None
    assert moved == db_path.with_name("atrium.set-aside-20231114T221320Z.db")
    after = snapshot(db_path.parent)
    assert after == {
        moved.name: before["atrium.db"],
        moved.name + "-wal": b"log",
        moved.name + "-shm": b"index",
    }
    assert files.set_aside(NOW) is None  # nothing left to move


def test_a_backup_put_in_place_is_the_database(db_path: Path) -> None:
    ids = database_with_threads(db_path, threads=2)
    files = DatabaseFiles(db_path)
    backup = take_backup(files, NOW, threading.Event())
    garbage_page(db_path)

    check_backup(backup.path)
    files.set_aside(NOW + 1)
    files.put_in_place(backup.path)

    store = Store(open_database(db_path))
    try:
        assert sorted(t.id for t in store.list_threads()) == sorted(ids)
    finally:
        store.db.close()
    assert backup.path.exists()


def test_a_damaged_backup_is_not_fit_to_restore(db_path: Path, tmp_path: Path) -> None:
    not_a_db = tmp_path / "atrium-20240101T000000Z.db"
    not_a_db.write_bytes(b"hello" * 100)
    database_with_threads(db_path)
    garbage_page(db_path)

    for path in (not_a_db, db_path, tmp_path / "missing.db"):
        with pytest.raises(BackupFailedError):
            check_backup(path)
