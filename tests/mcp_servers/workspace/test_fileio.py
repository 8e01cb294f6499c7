"""Confined I/O holds even when the tree changes between the check and the use."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
from pathlib import Path

import pytest

from mcp_servers.workspace import fileio
from mcp_servers.workspace.errors import ErrorCode, PathError
from mcp_servers.workspace.paths import Expect, real_root, resolve


@pytest.fixture
def ws(root: Path) -> Path:
    return real_root(root)


def test_a_parent_swapped_for_an_escaping_symlink_after_the_check_is_not_followed(
    ws: Path, outside: Path
) -> None:
    resolved = resolve(ws, "sub/a.txt", expect=Expect.FILE)
    shutil.rmtree(ws / "sub")
    (ws / "sub").symlink_to(outside)
    with pytest.raises(PathError) as caught:
        fileio.write_file(ws, resolved.real_parts, resolved.display, b"pwned")
    assert caught.value.code is ErrorCode.SYMLINK_ESCAPE
    assert not (outside / "a.txt").exists()


def test_a_file_swapped_for_an_escaping_symlink_is_replaced_not_followed(
    ws: Path, outside: Path
) -> None:
    resolved = resolve(ws, "sub/a.txt", expect=Expect.FILE)
    (ws / "sub" / "a.txt").unlink()
    (ws / "sub" / "a.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathError) as caught:
        fileio.write_file(ws, resolved.real_parts, resolved.display, b"pwned")
    assert caught.value.code is ErrorCode.SYMLINK_ESCAPE
    assert (outside / "secret.txt").read_text() == "top secret\n"


def test_reading_a_file_swapped_for_a_symlink_fails(ws: Path, outside: Path) -> None:
    resolved = resolve(ws, "sub/a.txt", expect=Expect.FILE)
    (ws / "sub" / "a.txt").unlink()
    (ws / "sub" / "a.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathError) as caught:
        fileio.read_file(ws, resolved.real_parts, resolved.display, 1000)
    assert caught.value.code is ErrorCode.SYMLINK_ESCAPE


def test_reading_a_file_swapped_for_a_fifo_fails_instead_of_hanging(ws: Path) -> None:
    resolved = resolve(ws, "sub/a.txt", expect=Expect.FILE)
    (ws / "sub" / "a.txt").unlink()
    os.mkfifo(ws / "sub" / "a.txt")
    with pytest.raises(PathError) as caught:
        fileio.read_file(ws, resolved.real_parts, resolved.display, 1000)
    assert caught.value.code is ErrorCode.NOT_REGULAR


def test_writes_are_atomic_and_keep_the_existing_permission_bits(ws: Path) -> None:
    target = ws / "sub" / "a.txt"
    target.chmod(0o640)
    created = fileio.write_file(ws, ("sub", "a.txt"), "sub/a.txt", b"new\n")
    assert created is False
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in (ws / "sub").iterdir()) == ["a.txt"]


def test_reads_larger_than_the_limit_are_refused(ws: Path) -> None:
    with pytest.raises(PathError) as caught:
        fileio.read_file(ws, ("sub", "a.txt"), "sub/a.txt", 5)
    assert caught.value.code is ErrorCode.TOO_LARGE


def test_walking_lists_symlinks_without_following_them(ws: Path, outside: Path) -> None:
    (ws / "out").symlink_to(outside)
    entries = list(fileio.walk(ws, (), ".", recursive=True))
    assert [(e.parts, e.kind) for e in entries] == [
        (("out",), "symlink"),
        (("sub",), "dir"),
        (("sub", "a.txt"), "file"),
    ]


DEAD_TEMP = ".atrium-0123456789abcdef.tmp"
LIVE_TEMP = ".atrium-fedcba9876543210.tmp"


def test_temporary_files_of_writes_are_never_walked_and_only_dead_ones_are_swept(ws: Path) -> None:
    dead = ws / "sub" / DEAD_TEMP  # a write killed mid-way left it
    dead.write_bytes(b"half a wri")
    live = ws / LIVE_TEMP
    live.write_bytes(b"being written")
    theirs = ws / ".atrium-notes.tmp"  # not a name the workspace writes
    theirs.write_text("the author's\n")
    with live.open("rb") as writing:
        fcntl.flock(writing, fcntl.LOCK_EX)  # a writer still at work holds its file
        names = {e.name for e in fileio.walk(ws, (), ".", recursive=True)}
        assert names == {"sub", "a.txt", theirs.name}
        assert fileio.remove_stale_temps(ws, seconds=30) == 1
        assert not dead.exists() and live.exists() and theirs.exists()
    assert fileio.remove_stale_temps(ws, seconds=30) == 1
    assert not live.exists() and theirs.read_text() == "the author's\n"


def test_a_write_holds_its_temporary_file_until_it_is_renamed_into_place(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sweep of another server starting on the same workspace must never take a live
    # write's file: the writer's lock is held from creation to rename.
    swept: list[int] = []
    rename = os.replace

    def sweep_then_rename(src: str, dst: str, **dir_fds: int) -> None:
        swept.append(fileio.remove_stale_temps(ws, seconds=30))
        rename(src, dst, **dir_fds)

    monkeypatch.setattr(os, "replace", sweep_then_rename)
    fileio.write_file(ws, ("sub", "a.txt"), "sub/a.txt", b"new\n")
    assert swept == [0]
    assert (ws / "sub" / "a.txt").read_bytes() == b"new\n"
