"""The real sidecar refuses a damaged or emptied database, and a start on a full disk, with
EXIT_REFUSED and a storage refusal naming the file, and leaves the files byte for byte as they
were; at run time a full disk is a DISK_FULL error and nothing written is lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from sidecar.protocol import (
    EXIT_REFUSED,
    ErrorCode,
    StorageRefusal,
    disk_full_message,
    refusal_reason,
    storage_refusal,
)
from tests.e2e.harness import RpcFailure, Sidecar
from tests.sidecar.store.damage import (
    database_left_with_a_wal,
    database_with_threads,
    garbage_header,
    garbage_page,
)
from tests.tmpfs import fill, small_tmpfs

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DATABASE_FILES = ("atrium.db", "atrium.db-wal", "atrium.db-shm")


def _emptied_beside_its_log(path: Path) -> None:
    database_left_with_a_wal(path)
    path.write_bytes(b"")


def _garbage_page(path: Path) -> None:
    database_with_threads(path)
    garbage_page(path)


def _garbage_header(path: Path) -> None:
    database_with_threads(path)
    garbage_header(path)


def _database_files(data: Path) -> dict[str, bytes]:
    return {name: (data / name).read_bytes() for name in DATABASE_FILES if (data / name).exists()}


async def _refused_start(data: Path, workspace: Path) -> tuple[StorageRefusal, str]:
    sidecar = await Sidecar.spawn(data, workspace)
    with anyio.fail_after(60):
        code = await sidecar.proc.wait()
    await sidecar.kill()
    stderr = sidecar.stderr.decode("utf-8", "replace")
    assert code == EXIT_REFUSED, stderr
    assert "Traceback" not in stderr
    refusal = storage_refusal(stderr)
    reason = refusal_reason(stderr)
    assert refusal is not None and reason is not None, stderr
    return refusal, reason


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (_emptied_beside_its_log, "emptied"),
        (_garbage_page, "damaged"),
        (_garbage_header, "damaged"),
    ],
    ids=["empty-file-beside-its-log", "garbage-page", "garbage-header"],
)
async def test_a_damaged_database_is_refused_and_left_as_it_was(
    sidecar_data: Path, workspace: Path, damage: Callable[[Path], None], problem: str
) -> None:
    path = sidecar_data / "atrium.db"
    damage(path)
    before = _database_files(sidecar_data)

    refusal, reason = await _refused_start(sidecar_data, workspace)

    assert refusal.problem == problem
    assert refusal.database == str(path)
    assert str(path) in reason
    assert _database_files(sidecar_data) == before


async def test_a_start_on_a_full_disk_is_refused_and_the_database_left_alone(
    tmp_path: Path, workspace: Path
) -> None:
    with small_tmpfs(tmp_path / "full") as data:
        sidecar = await Sidecar.start(data, workspace)
        ids = [(await sidecar.call("thread/create", {"title": t}))["id"] for t in ("A", "B")]
        assert await sidecar.shutdown() == 0
        filler = fill(data)
        before = _database_files(data)

        refusal, reason = await _refused_start(data, workspace)

        assert refusal.problem == "disk_full"
        assert reason == disk_full_message(str(data))
        assert _database_files(data) == before
        filler.unlink()
        sidecar = await Sidecar.start(data, workspace)
        try:
            listing = await sidecar.call("thread/list")
            assert sorted(t["id"] for t in listing["threads"]) == sorted(ids)
        finally:
            await sidecar.kill()


async def test_a_first_start_on_a_full_disk_is_refused(tmp_path: Path, workspace: Path) -> None:
    with small_tmpfs(tmp_path / "full") as data:
        fill(data)

        refusal, _reason = await _refused_start(data, workspace)

        assert refusal.problem == "disk_full"
        assert _database_files(data) == {}  # no empty file to pass for an emptied one later


async def test_a_full_disk_at_run_time_is_disk_full_and_loses_nothing(
    tmp_path: Path, workspace: Path
) -> None:
    with small_tmpfs(tmp_path / "full") as data:
        # No daily backup: its copy, removed when it fails for want of room, would free some.
        (data / "settings.json").write_text(json.dumps({"backup_days": 0}), encoding="utf-8")
        sidecar = await Sidecar.start(data, workspace)
        try:
            kept = await sidecar.call("thread/create", {"title": "Kept"})
            filler = fill(data)

            with pytest.raises(RpcFailure) as refused:
                await sidecar.call("thread/create", {"title": "No room"})
            assert refused.value.code == ErrorCode.DISK_FULL
            assert refused.value.error["data"] == {"folder": str(data)}
            assert refused.value.error["message"] == disk_full_message(str(data))
            listing = await sidecar.call("thread/list")
            assert [t["id"] for t in listing["threads"]] == [kept["id"]]

            filler.unlink()
            again = await sidecar.call("thread/create", {"title": "No room"})
            listing = await sidecar.call("thread/list")
            assert sorted(t["id"] for t in listing["threads"]) == sorted([kept["id"], again["id"]])
        finally:
            await sidecar.kill()
