"""Schema versions: an older database is migrated in place, a newer one is refused untouched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sidecar.store import Store, open_database
from sidecar.store.db import SCHEMA_VERSION, NewerSchemaError, stored_version

RELEASE_0_1_0 = Path(__file__).parents[2] / "fixtures" / "db" / "release-0.1.0.sql"


def _restore(dump: Path, target: Path) -> Path:
    conn = sqlite3.connect(target)
    conn.executescript(dump.read_text(encoding="utf-8"))
    conn.close()
    return target


def test_a_database_made_by_release_0_1_0_is_migrated_keeping_every_row(tmp_path: Path) -> None:
    path = _restore(RELEASE_0_1_0, tmp_path / "atrium.db")
    before = sqlite3.connect(path)
    assert stored_version(before) == 2
    counts = {
        table: before.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("threads", "messages", "runs", "interrupts", "grants", "tool_journal")
    }
    checkpoint_tables = before.execute(
        "SELECT count(*) FROM sqlite_master WHERE name LIKE 'checkpoint%' OR name = 'writes'"
    ).fetchone()[0]
    before.close()

    db = open_database(path)
    store = Store(db)

    assert stored_version(db.conn) == SCHEMA_VERSION
    for table, count in counts.items():
        assert db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == count, table
    assert store.get_thread("t-child").parent_id == "t-harbour"
    assert [m.content for m in store.recent_messages("t-harbour", 2)] == [
        "message 2: the river is wide",
        "answer 2",
    ]
    assert [i.id for i in store.pending_interrupts("t-harbour")] == ["i-1"]
    assert store.has_grant("t-harbour", "workspace", "write")
    assert (
        db.conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'checkpoint%' OR name = 'writes'"
        ).fetchone()[0]
        == checkpoint_tables
    )
    db.close()


def test_opening_a_migrated_database_again_changes_nothing(tmp_path: Path) -> None:
    path = _restore(RELEASE_0_1_0, tmp_path / "atrium.db")
    open_database(path).close()
    first = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    open_database(path).close()
    second = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    assert first == second


def test_a_database_from_a_newer_version_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "atrium.db"
    open_database(path).close()
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    conn.commit()
    conn.close()
    snapshot = path.read_bytes()

    with pytest.raises(NewerSchemaError) as caught:
        open_database(path)

    assert caught.value.found == SCHEMA_VERSION + 1
    assert path.read_bytes() == snapshot


def test_a_new_file_has_no_version_and_one_with_tables_but_no_meta_is_version_1(
    tmp_path: Path,
) -> None:
    empty = sqlite3.connect(tmp_path / "new.db")
    assert stored_version(empty) is None
    old = sqlite3.connect(tmp_path / "old.db")
    old.execute("CREATE TABLE threads (id TEXT PRIMARY KEY)")
    assert stored_version(old) == 1
