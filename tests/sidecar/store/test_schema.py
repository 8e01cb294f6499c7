"""The schema registry: each owner's tables versioned in `meta`, made at open or on first use,
migrated step by step, and a part written by a newer version refused before anything changes."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mcp_servers.memory import Scope
from sidecar.store import Store, open_database
from sidecar.store.libraries import open_vectors
from sidecar.store.schema import (
    REGISTRY,
    SCHEMA_VERSION,
    NewerSchemaError,
    SchemaPart,
    apply,
    recorded_version,
)


def _meta(path: Path) -> dict[str, str]:
    with closing(sqlite3.connect(path)) as conn:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _tables(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_every_part_has_its_own_name_and_key_and_atrium_keeps_the_key_old_releases_read() -> None:
    assert len({p.name for p in REGISTRY}) == len({p.key for p in REGISTRY}) == len(REGISTRY)
    atrium = next(p for p in REGISTRY if p.name == "atrium")
    assert (atrium.key, atrium.version) == ("schema_version", SCHEMA_VERSION)
    assert {p.name for p in REGISTRY} >= {"atrium", "schedule", "memory", "vectors"}


def test_opening_makes_and_records_the_parts_made_at_open_only(tmp_path: Path) -> None:
    path = tmp_path / "atrium.db"
    open_database(path).close()

    meta = _meta(path)
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["schema_version.schedule"] == "2"
    assert "schema_version.memory" not in meta
    assert "schema_version.vectors" not in meta
    assert {"schedules", "schedule_fires"} <= _tables(path)
    assert not {"memory_fts", "memory_vectors"} & _tables(path)


def test_the_memory_and_vector_parts_are_made_and_recorded_on_first_use(tmp_path: Path) -> None:
    path = tmp_path / "atrium.db"
    store = Store(open_database(path))
    open_vectors(store.open_memory())
    store.db.close()

    assert {"memory_fts", "memory_vectors"} <= _tables(path)
    meta = _meta(path)
    assert (meta["schema_version.memory"], meta["schema_version.vectors"]) == ("2", "1")


def test_memory_tables_made_before_parts_were_versioned_count_as_version_1_and_migrate(
    tmp_path: Path,
) -> None:
    path = tmp_path / "atrium.db"
    store = Store(open_database(path))
    thread = store.create_thread("t")
    store.add_message(thread.id, "user", "the harbour", message_id="m1")
    memory = store.open_memory()
    saved = memory.write(Scope(thread=thread.id), "thread", "a fact", source_message="m1")
    store.db.close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'schema_version.memory'")
        conn.commit()

    store = Store(open_database(path))
    part = next(p for p in REGISTRY if p.name == "memory")
    assert recorded_version(store.db.conn, part) == 1
    assert store.open_memory().read(saved.key).text == "a fact"
    store.db.close()
    assert _meta(path)["schema_version.memory"] == "2"


@pytest.mark.parametrize("part", ["memory", "schedule", "vectors"])
def test_a_part_written_by_a_newer_version_is_refused_and_the_file_left_untouched(
    tmp_path: Path, part: str
) -> None:
    path = tmp_path / "atrium.db"
    open_database(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, '99')"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (f"schema_version.{part}",),
        )
        conn.commit()
    snapshot = path.read_bytes()

    with pytest.raises(NewerSchemaError) as caught:
        open_database(path)

    assert (caught.value.part, caught.value.found) == (part, 99)
    assert path.read_bytes() == snapshot


def _demo(fail_at: int | None = None) -> SchemaPart:
    def step(column: str, version: int):
        def run(conn: sqlite3.Connection) -> None:
            if version == fail_at:
                raise RuntimeError("step failed")
            conn.execute(f"ALTER TABLE demo ADD COLUMN {column} TEXT")

        return run

    return SchemaPart(
        name="demo",
        version=3,
        key="schema_version.demo",
        tables={"demo": "CREATE TABLE IF NOT EXISTS demo (a TEXT, b TEXT, c TEXT);"},
        steps={1: step("b", 1), 2: step("c", 2)},
        indexes=("CREATE INDEX IF NOT EXISTS demo_by_c ON demo(c)",),
        probe="demo",
    )


def _columns(conn: sqlite3.Connection) -> list[str]:
    return [r[1] for r in conn.execute("PRAGMA table_info(demo)")]


def test_a_part_is_migrated_from_its_recorded_version_one_step_at_a_time(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "d.db", isolation_level=None)) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE demo (a TEXT)")
        conn.execute("INSERT INTO demo(a) VALUES ('kept')")
        part = _demo()
        assert recorded_version(conn, part) == 1

        apply(conn, part, recorded_version(conn, part))

        assert _columns(conn) == ["a", "b", "c"]
        assert conn.execute("SELECT a FROM demo").fetchall() == [("kept",)]
        assert recorded_version(conn, part) == 3


def test_a_new_file_gets_a_part_at_its_version_with_no_step_run(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "d.db", isolation_level=None)) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        part = _demo(fail_at=1)  # a step that ran would fail
        assert recorded_version(conn, part) is None

        apply(conn, part, None)

        assert _columns(conn) == ["a", "b", "c"]
        assert recorded_version(conn, part) == 3


def test_a_failed_step_keeps_the_version_the_steps_before_it_reached(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "d.db", isolation_level=None)) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("CREATE TABLE demo (a TEXT)")
        part = _demo(fail_at=2)

        with pytest.raises(RuntimeError):
            apply(conn, part, 1)

        assert _columns(conn) == ["a", "b"]
        assert recorded_version(conn, part) == 2
