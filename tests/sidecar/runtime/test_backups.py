"""The daily backup desk: one backup a day, the author's retention, off the event loop with a
deadline."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sidecar.runtime import backups as backups_runtime
from sidecar.runtime.backups import DAY_S, DailyBackups
from sidecar.store.backups import BackupStoppedError
from sidecar.store.files import Backup, DatabaseFiles
from tests.sidecar.store.damage import database_with_threads

NOW = 1_700_000_000.0


class _Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def files(tmp_path: Path) -> DatabaseFiles:
    path = tmp_path / "data" / "atrium.db"
    database_with_threads(path, threads=1, messages=5)
    return DatabaseFiles(path)


@pytest.mark.anyio
async def test_a_backup_is_taken_at_start_then_once_a_day_and_the_newest_are_kept(
    files: DatabaseFiles,
) -> None:
    clock = _Clock()
    desk = DailyBackups(files, lambda: 2, clock=clock)

    first = await desk.run_if_due()
    clock.now += DAY_S - 60
    same_day = await desk.run_if_due()
    taken = [first]
    for _ in range(3):
        clock.now += DAY_S
        taken.append(await desk.run_if_due())

    assert first is not None and first.taken_at == NOW
    assert same_day is None
    assert all(b is not None for b in taken)
    assert [b.taken_at for b in files.backups()] == [clock.now, clock.now - DAY_S]


@pytest.mark.anyio
async def test_no_backups_are_taken_or_removed_when_they_are_off(files: DatabaseFiles) -> None:
    clock = _Clock()
    keep = [1]
    desk = DailyBackups(files, lambda: keep[0], clock=clock)
    await desk.run_if_due()
    keep[0] = 0
    clock.now += 3 * DAY_S

    assert await desk.run_if_due() is None
    assert [b.taken_at for b in files.backups()] == [NOW]


@pytest.mark.anyio
async def test_a_backup_past_its_deadline_is_told_to_stop_and_waited_for(
    files: DatabaseFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped: list[bool] = []

    def copy_until_stopped(_files: DatabaseFiles, _now: float, stop: threading.Event) -> Backup:
        stopped.append(stop.wait(30))  # a copy that would outlast the deadline
        raise BackupStoppedError("stopped")

    monkeypatch.setattr(backups_runtime, "take_backup", copy_until_stopped)
    desk = DailyBackups(files, lambda: 7, clock=_Clock(), deadline_s=0.1)

    assert await desk.run_if_due() is None
    assert stopped == [True]
    assert files.backups() == []
