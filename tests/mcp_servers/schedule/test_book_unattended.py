"""Each schedule's unattended-run policy in the book: stored, changed alone, refused with its code
when unknown or out of range, offered by the server's tools; a schedules table of the book's
schema version 1 gets the columns when the book opens it standalone, its schedules waiting."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from mcp import Client

from mcp_servers.schedule import ErrorCode, ScheduleBook, ScheduleRefusal, build_server

V1_SCHEDULES = """
CREATE TABLE schedules (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, spec TEXT NOT NULL,
    timezone TEXT NOT NULL, prompt TEXT NOT NULL, thread_id TEXT,
    missed TEXT NOT NULL DEFAULT 'run_once', enabled INTEGER NOT NULL DEFAULT 1,
    next_fire_at REAL, anchor REAL NOT NULL, created_at REAL NOT NULL,
    updated_at REAL NOT NULL, last_status TEXT, last_run_id TEXT
);
INSERT INTO schedules VALUES ('old', 'Old', 'interval', '3600', 'UTC', 'check', NULL,
    'run_once', 1, 1800003600.0, 1800000000.0, 1800000000.0, 1800000000.0, NULL, NULL);
"""


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


@pytest.fixture
def book(tmp_path: Path) -> Iterator[ScheduleBook]:
    conn = _connect(tmp_path / "book.db")
    yield ScheduleBook(conn, default_timezone="UTC", now=lambda: 1_800_000_000.0)
    conn.close()


def test_a_policy_is_stored_and_changed_alone(book: ScheduleBook) -> None:
    made = book.create(
        kind="cron", spec="0 3 * * *", prompt="p", unattended="deny_after", deny_after_minutes=45
    )
    assert (book.get(made.id).unattended, book.get(made.id).deny_after_minutes) == (
        "deny_after",
        45,
    )
    book.update(made.id, unattended="skip")
    assert book.get(made.id).view()["unattended"] == {"action": "skip", "minutes": 45}
    book.update(made.id, prompt="q")
    assert book.get(made.id).unattended == "skip"


@pytest.mark.parametrize(
    ("action", "minutes"), [("allow", 30), ("deny_after", 0), ("deny_after", 7 * 24 * 60 + 1)]
)
def test_an_unknown_policy_or_minutes_out_of_range_is_refused(
    book: ScheduleBook, action: str, minutes: int
) -> None:
    with pytest.raises(ScheduleRefusal) as refused:
        book.create(
            kind="cron", spec="0 3 * * *", prompt="p", unattended=action, deny_after_minutes=minutes
        )
    assert refused.value.code == ErrorCode.BAD_UNATTENDED
    assert book.list() == []


def test_a_version_1_table_gets_the_policy_columns_and_its_schedules_wait(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with closing(_connect(path)) as conn:
        conn.executescript(V1_SCHEDULES)
    conn = _connect(path)
    try:
        book = ScheduleBook(conn, default_timezone="UTC", now=lambda: 1_800_000_000.0)
        old = book.get("old")
        assert (old.unattended, old.deny_after_minutes, old.prompt) == ("wait", 30, "check")
        ScheduleBook(conn, default_timezone="UTC")  # opening again changes nothing
        book.update("old", unattended="deny_after", deny_after_minutes=5)
        assert book.get("old").view()["unattended"] == {"action": "deny_after", "minutes": 5}
    finally:
        conn.close()


@pytest.mark.anyio
async def test_the_tools_take_and_show_the_policy(book: ScheduleBook) -> None:
    async with Client(build_server(book), raise_exceptions=True) as client:
        made = await client.call_tool(
            "create",
            {
                "kind": "interval",
                "spec": "1h",
                "prompt": "check",
                "unattended": "deny_after",
                "deny_after_minutes": 15,
            },
        )
        assert made.structured_content is not None
        assert made.structured_content["unattended"] == {"action": "deny_after", "minutes": 15}
        changed = await client.call_tool(
            "update", {"schedule_id": made.structured_content["id"], "unattended": "skip"}
        )
        assert changed.structured_content is not None
        assert changed.structured_content["unattended"] == {"action": "skip", "minutes": 15}
        refused = await client.call_tool(
            "create",
            {"kind": "interval", "spec": "1h", "prompt": "p", "deny_after_minutes": 0},
        )
        assert refused.is_error
