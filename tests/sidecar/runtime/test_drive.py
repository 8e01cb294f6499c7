"""How `drive` ends a run that a full disk stops: a typed `disk_full` failure naming the folder,
never an internal error, whether or not its end can still be recorded."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams, RunFailed
from sidecar.runtime.drive import drive
from sidecar.runtime.emitter import RunEmitter
from sidecar.store import Store, open_database

pytestmark = pytest.mark.anyio


class _FullDiskGraph:
    """A graph whose step writes, and finds the disk full."""

    async def astream(self, _input: Any, _config: Any, **_kw: Any) -> AsyncIterator[Any]:
        full = sqlite3.OperationalError("database or disk is full")
        full.sqlite_errorcode = 13  # SQLITE_FULL, as SQLite sets it
        raise full
        yield  # an async generator


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = open_database(tmp_path / "atrium.db")
    yield Store(db)
    db.close()


async def test_a_turn_that_finds_the_disk_full_fails_as_such_and_names_the_folder(
    store: Store, tmp_path: Path
) -> None:
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "start")
    sent: list[RunEventParams] = []
    emit = RunEmitter(store, sent.append, "r1", thread.id, window_s=0.01)
    ended = await drive(_FullDiskGraph(), None, store, emit, {}, resumed=False)
    assert isinstance(ended.final, RunFailed)
    assert ended.final.error.code == "disk_full"
    assert ended.final.error.message == f"the disk holding {tmp_path} is full: free space and retry"
    assert store.get_thread(thread.id).status == "failed"  # recorded: there was room for that
