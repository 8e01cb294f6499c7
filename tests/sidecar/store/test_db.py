"""Opening the database file: pragmas, schema, WAL readers beside the writer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from sidecar.store import Store, open_database
from sidecar.store.db import SCHEMA_VERSION

TABLES = {
    "meta",
    "threads",
    "messages",
    "runs",
    "run_events",
    "interrupts",
    "grants",
    "tool_journal",
}


@pytest.fixture
def reader(db_path: Path, store: Store) -> Iterator[sqlite3.Connection]:
    """A second connection to the same file, as another process would open it. It waits at
    most 100 ms for a lock, so a blocked read fails fast instead of hanging."""
    del store  # the file must exist first
    conn = sqlite3.connect(db_path, timeout=0.1, isolation_level=None)
    yield conn
    conn.close()


def _pragma(conn: sqlite3.Connection, name: str) -> object:
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_the_database_uses_wal_and_a_busy_timeout(store: Store) -> None:
    assert _pragma(store.conn, "journal_mode") == "wal"
    assert _pragma(store.conn, "busy_timeout") == 10_000
    assert _pragma(store.conn, "foreign_keys") == 1


def test_the_busy_timeout_can_be_chosen(open_store: Callable[..., Store]) -> None:
    assert _pragma(open_store(busy_timeout_ms=1234).conn, "busy_timeout") == 1234


def test_wal_mode_is_a_property_of_the_file(db_path: Path, store: Store) -> None:
    with closing(sqlite3.connect(db_path)) as other:
        assert _pragma(other, "journal_mode") == "wal"


def test_opening_creates_the_parent_directory_and_every_table(db_path: Path, store: Store) -> None:
    assert db_path.is_file()
    names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert names >= TABLES
    version = store.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert version[0] == str(SCHEMA_VERSION)


def test_reopening_keeps_the_data_and_the_schema_version(
    open_store: Callable[..., Store],
) -> None:
    first = open_store()
    thread = first.create_thread("kept")
    first.db.close()
    second = open_store()
    assert second.get_thread(thread.id) == thread
    rows = second.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchall()
    assert [r[0] for r in rows] == [str(SCHEMA_VERSION)]


def test_a_file_that_is_not_a_database_raises_database_error(tmp_path: Path) -> None:
    path = tmp_path / "atrium.db"
    path.write_bytes(b"this is not an SQLite file, just some text padding it out" * 20)
    with pytest.raises(sqlite3.DatabaseError):
        open_database(path)


def test_a_second_connection_reads_while_the_first_holds_a_write_transaction(
    store: Store, reader: sqlite3.Connection
) -> None:
    before = store.create_thread("committed")
    with store.transaction():
        store.create_thread("uncommitted")
        rows = reader.execute("SELECT id FROM threads").fetchall()
        assert [r[0] for r in rows] == [before.id]
    assert reader.execute("SELECT count(*) FROM threads").fetchone()[0] == 2


def test_the_writer_commits_while_a_reader_holds_a_snapshot(
    open_store: Callable[..., Store], reader: sqlite3.Connection
) -> None:
    # In rollback-journal mode this commit would wait for the reader and fail with
    # "database is locked" after the (short) busy timeout; WAL lets both proceed.
    writer = open_store(busy_timeout_ms=200)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM threads").fetchone()[0] == 0
    writer.create_thread("written during the read")
    assert reader.execute("SELECT count(*) FROM threads").fetchone()[0] == 0
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM threads").fetchone()[0] == 1


def test_a_failed_transaction_rolls_back_everything_in_it(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.create_thread("lost")
        raise RuntimeError("abort")
    assert store.list_threads() == []
    with store.transaction():
        store.create_thread("kept")
    assert [t.title for t in store.list_threads()] == ["kept"]


def test_a_version_3_database_gains_queued_message_lanes_keeping_its_queue(tmp_path: Path):
    from sidecar.store.queue import QueueRepo

    path = tmp_path / "a.db"
    db = open_database(path)
    thread = Store(db).create_thread("t").id
    kept = QueueRepo(db.conn).enqueue(thread, "followup", "written by version 3")
    db.close()
    with closing(sqlite3.connect(path)) as conn:  # as version 3 left it: no `lane` column
        conn.execute("ALTER TABLE queued_messages DROP COLUMN lane")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        conn.commit()

    db = open_database(path)
    try:
        [record] = QueueRepo(db.conn).queued(thread)
        assert (record.id, record.text, record.lane) == (kept.id, "written by version 3", "main")
    finally:
        db.close()
