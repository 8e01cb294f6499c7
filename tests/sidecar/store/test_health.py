"""The start-up check of the database file: what is fresh, what is damaged or emptied, and that
the check itself writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.store import health
from sidecar.store.files import DatabaseFiles
from sidecar.store.health import (
    MARKER_NAME,
    CheckReport,
    DatabaseDamagedError,
    check_database,
    mark_used,
)
from tests.sidecar.store.damage import (
    database_left_with_a_wal,
    database_with_threads,
    garbage_header,
    garbage_page,
    snapshot,
)


def _refused(path: Path) -> DatabaseDamagedError:
    before = snapshot(path.parent)
    with pytest.raises(DatabaseDamagedError) as caught:
        check_database(path)
    assert snapshot(path.parent) == before
    assert caught.value.path == path
    return caught.value


def test_no_file_is_a_fresh_install(db_path: Path) -> None:
    db_path.parent.mkdir()
    assert check_database(db_path) == CheckReport(fresh=True, checked=False)


def test_an_empty_file_in_an_unused_folder_is_a_fresh_install(db_path: Path) -> None:
    db_path.parent.mkdir()
    db_path.write_bytes(b"")
    assert check_database(db_path) == CheckReport(fresh=True, checked=False)


def test_an_empty_file_beside_a_write_ahead_log_is_emptied(db_path: Path) -> None:
    database_left_with_a_wal(db_path)
    db_path.write_bytes(b"")
    assert DatabaseFiles(db_path).wal.stat().st_size > 0

    assert _refused(db_path).problem == "emptied"


def test_an_empty_file_in_a_folder_that_held_a_database_is_emptied(db_path: Path) -> None:
    database_with_threads(db_path)
    mark_used(db_path.parent)
    db_path.write_bytes(b"")

    assert _refused(db_path).problem == "emptied"
    assert (db_path.parent / MARKER_NAME).exists()


def test_an_empty_file_with_backups_beside_it_is_emptied(db_path: Path) -> None:
    files = DatabaseFiles(db_path)
    files.backup_dir.mkdir(parents=True)
    database_with_threads(files.backup_path(1_700_000_000))
    db_path.write_bytes(b"")

    assert _refused(db_path).problem == "emptied"


def test_a_missing_file_with_a_write_ahead_log_is_damaged(db_path: Path) -> None:
    database_left_with_a_wal(db_path)
    db_path.unlink()

    assert _refused(db_path).problem == "damaged"


def test_a_garbage_header_is_damaged(db_path: Path) -> None:
    database_with_threads(db_path)
    garbage_header(db_path)

    assert _refused(db_path).problem == "damaged"


def test_a_file_cut_short_of_a_whole_page_is_damaged(db_path: Path) -> None:
    database_with_threads(db_path)
    with db_path.open("rb+") as handle:
        handle.truncate(db_path.stat().st_size - 100)

    assert _refused(db_path).problem == "damaged"


def test_one_garbage_page_in_the_middle_is_found_by_quick_check(db_path: Path) -> None:
    database_with_threads(db_path)
    garbage_page(db_path)

    error = _refused(db_path)
    assert error.problem == "damaged"
    assert not DatabaseFiles(db_path).wal.exists()
    assert not DatabaseFiles(db_path).shm.exists()


def test_a_write_ahead_log_with_a_garbage_header_is_damaged(db_path: Path) -> None:
    database_left_with_a_wal(db_path)
    wal = DatabaseFiles(db_path).wal
    wal.write_bytes(b"\x00" * 32 + wal.read_bytes()[32:])

    assert _refused(db_path).problem == "damaged"


def test_a_whole_database_with_its_log_passes_and_keeps_both_files_as_they_were(
    db_path: Path,
) -> None:
    database_left_with_a_wal(db_path)
    before = snapshot(db_path.parent)

    assert check_database(db_path) == CheckReport(fresh=False, checked=True)
    assert snapshot(db_path.parent) == before


def test_a_check_past_its_deadline_is_logged_and_the_database_used(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database_with_threads(db_path)
    monkeypatch.setattr(health, "PROGRESS_OPS", 1)

    assert check_database(db_path, deadline_s=0) == CheckReport(fresh=False, checked=False)
