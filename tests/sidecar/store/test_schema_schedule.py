"""The schedule part of the schema registry at version 2: schedules of a version 1 file get
their unattended-run policy columns when the file is opened, each one waiting as it did."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from sidecar.store import Store, open_database
from sidecar.store.schema import SCHEDULES

V1_COLUMNS = (
    "id, name, kind, spec, timezone, prompt, thread_id, missed, enabled, next_fire_at, anchor,"
    " created_at, updated_at, last_status, last_run_id"
)


def test_schedules_of_a_version_1_file_wait_after_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "atrium.db"
    store = Store(open_database(path))
    book = store.open_schedule_book(default_timezone="UTC")
    made = book.create(kind="cron", spec="0 3 * * *", prompt="night report", name="Night")
    store.db.close()
    with closing(sqlite3.connect(path)) as conn:  # as a release before the policy left it
        conn.execute(f"CREATE TABLE old AS SELECT {V1_COLUMNS} FROM schedules")
        conn.execute("DROP TABLE schedules")
        conn.execute("ALTER TABLE old RENAME TO schedules")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version.schedule'")
        conn.commit()

    store = Store(open_database(path))
    again = store.open_schedule_book(default_timezone="UTC").get(made.id)
    assert (again.name, again.prompt, again.unattended, again.deny_after_minutes) == (
        "Night",
        "night report",
        "wait",
        30,
    )
    store.db.close()
    with closing(sqlite3.connect(path)) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta[SCHEDULES.key] == str(SCHEDULES.version) == "2"
