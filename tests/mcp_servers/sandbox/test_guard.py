"""The in-process guard's policy, decided without running any sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_servers.sandbox._guard import decide


@pytest.fixture
def run_dir(tmp_path: Path) -> str:
    path = tmp_path / "run"
    path.mkdir()
    return os.path.realpath(path)


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("socket.connect", (None, ("127.0.0.1", 80))),
        ("socket.bind", (None, ("0.0.0.0", 8080))),
        ("socket.getaddrinfo", ("example.com", 443, 0, 0, 0)),
        ("socket.sendto", (None, ("1.1.1.1", 53))),
        ("socket.gethostbyname", ("example.com",)),
        ("subprocess.Popen", ("sh", ["sh"], None, None)),
        ("os.system", (b"id",)),
        ("os.exec", ("/bin/sh", ["sh"], None)),
        ("os.posix_spawn", ("/bin/sh", ["sh"], {})),
        ("os.fork", ()),
        ("ctypes.dlopen", ("libc.so.6",)),
        ("ctypes.call_function", (0, ())),
        ("import", ("_posixsubprocess", None, None, None, None)),
        ("import", ("_ctypes", None, None, None, None)),
        ("os.kill", (1, 9)),
    ],
)
def test_network_processes_ctypes_and_signals_are_refused(
    run_dir: str, event: str, args: tuple[object, ...]
) -> None:
    assert decide(event, args, run_dir) is not None


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("socket.__new__", (None, 1, 1, 0)),
        ("import", ("json", None, None, None, None)),
        ("os.kill", (os.getpid(), 15)),
        ("compile", (b"x = 1", "main.py")),
    ],
)
def test_harmless_events_are_allowed(run_dir: str, event: str, args: tuple[object, ...]) -> None:
    assert decide(event, args, run_dir) is None


def test_writing_inside_the_run_directory_is_allowed(run_dir: str) -> None:
    assert decide("open", (os.path.join(run_dir, "out.txt"), "w", 0), run_dir) is None
    assert decide("os.mkdir", (os.path.join(run_dir, "d"), 0o777, None), run_dir) is None


@pytest.mark.parametrize(
    "args",
    [
        ("../escape.txt", "w", 0),
        ("/tmp/escape.txt", "a", 0),
        ("/etc/passwd", "r+", 0),
        ("/tmp/escape.txt", None, os.O_WRONLY | os.O_CREAT),
        (b"/tmp/escape.txt", None, os.O_RDWR),
    ],
)
def test_writing_outside_the_run_directory_is_refused(
    run_dir: str, args: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run_dir)
    assert decide("open", args, run_dir) is not None


def test_reading_files_is_left_to_the_kernel_layer(run_dir: str, tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("x")
    assert decide("open", (str(tmp_path / "data.txt"), "r", os.O_RDONLY), run_dir) is None


def test_opening_a_directory_outside_is_refused_so_dir_fds_cannot_escape(
    run_dir: str, tmp_path: Path
) -> None:
    assert decide("open", (str(tmp_path), None, os.O_RDONLY), run_dir) is not None
    assert decide("open", (run_dir, None, os.O_RDONLY), run_dir) is None


def test_a_symlink_inside_pointing_out_does_not_make_a_write_inside(
    run_dir: str, tmp_path: Path
) -> None:
    os.symlink(tmp_path, os.path.join(run_dir, "link"))
    target = os.path.join(run_dir, "link", "escape.txt")
    assert decide("open", (target, "w", 0), run_dir) is not None


def test_paths_relative_to_a_dir_fd_are_resolved_through_it(run_dir: str, tmp_path: Path) -> None:
    inside = os.open(run_dir, os.O_RDONLY)
    outside = os.open(tmp_path, os.O_RDONLY)
    try:
        assert decide("os.remove", ("x", inside), run_dir) is None
        assert decide("os.remove", ("x", outside), run_dir) is not None
    finally:
        os.close(inside)
        os.close(outside)


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("os.rename", ("a", "/tmp/b", None, None)),
        ("os.link", ("/etc/passwd", "here", None, None)),
        ("os.remove", ("/tmp/x", None)),
        ("os.rmdir", ("..", None)),
        ("os.mkdir", ("../d", 0o777, None)),
        ("os.symlink", ("x", "/tmp/link", None)),
        ("os.chmod", ("/tmp", 0o777, None)),
        ("os.truncate", ("/tmp/x", 0)),
        ("os.utime", ("/tmp/x", None, None, None)),
    ],
)
def test_changes_to_paths_outside_are_refused(
    run_dir: str, event: str, args: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run_dir)
    assert decide(event, args, run_dir) is not None


@pytest.mark.parametrize(
    ("event", "args"),
    [
        ("os.mkdir", ("d", 0o777, -1)),
        ("os.rmdir", ("d", -1)),
        ("os.remove", ("f", -1)),
        ("os.rename", ("f", "g", -1, -1)),
        ("os.link", ("f", "g", -1, -1)),
        ("os.symlink", ("f", "g", -1)),
        ("os.chmod", ("f", 0o600, -1)),
        ("os.utime", ("f", None, None, -1)),
    ],
)
def test_relative_changes_inside_the_run_directory_without_a_dir_fd_are_allowed(
    run_dir: str, event: str, args: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPython's audit events pass dir_fd=-1 when the call named none: the cwd counts."""
    monkeypatch.chdir(run_dir)
    assert decide(event, args, run_dir) is None


def test_relative_changes_without_a_dir_fd_are_still_judged_against_the_cwd(
    run_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert decide("os.mkdir", ("d", 0o777, -1), run_dir) is not None
    assert decide("os.remove", ("run/../x", -1), run_dir) is not None
