"""`python -m desktop.preflight` names each missing system library and its package before the
window starts, and never blocks a machine that has everything (or where it cannot check)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.preflight import (
    DEBIAN_PACKAGES,
    Missing,
    display_problem,
    find_missing,
    main,
    missing_in,
    report,
    uses_xcb,
)

REPO = Path(__file__).resolve().parents[2]

LDD_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffd6b3f5000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f1c2a000000)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f1c29ff0000)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1c29c00000)
\tlibweird.so.9 => not found
"""

LDD_FINE = """\
\tlinux-vdso.so.1 (0x00007ffd6b3f5000)
\tlibxcb-icccm.so.4 => /lib/x86_64-linux-gnu/libxcb-icccm.so.4 (0x00007f1c29fe0000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f1c2a400000)
"""


def _pyside_tree(tmp_path: Path) -> Path:
    root = tmp_path / "PySide6"
    for relative in ("Qt/plugins/platforms/libqxcb.so", "Qt/lib/libQt6Widgets.so.6"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(b"")
    return root


def test_not_found_lines_are_read_once_each_in_order():
    assert missing_in(LDD_MISSING) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libweird.so.9"]
    assert missing_in(LDD_FINE) == []
    assert missing_in("") == []


def test_each_missing_library_is_named_with_its_debian_package(tmp_path: Path):
    outputs = {"libqxcb.so": LDD_MISSING, "libQt6Widgets.so.6": LDD_FINE}
    missing = find_missing(_pyside_tree(tmp_path), lambda path: outputs[path.name])
    assert missing == [
        Missing("libxcb-icccm.so.4", "libxcb-icccm4"),
        Missing("libxcb-keysyms.so.1", "libxcb-keysyms1"),
        Missing("libweird.so.9", None),
    ]
    text = report(missing)
    assert "libxcb-icccm.so.4 (package libxcb-icccm4)" in text
    assert "libweird.so.9\n" in text
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1\n" in text


def test_a_machine_with_everything_passes(tmp_path: Path):
    assert find_missing(_pyside_tree(tmp_path), lambda _path: LDD_FINE) == []


def test_when_ldd_cannot_run_the_app_is_not_blocked(tmp_path: Path):
    assert find_missing(_pyside_tree(tmp_path), lambda _path: None) == []
    assert find_missing(tmp_path / "no-pyside", lambda _path: LDD_MISSING) == []


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({}, "linux", True),
        ({"QT_QPA_PLATFORM": "xcb"}, "linux", True),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({"QT_QPA_PLATFORM": "wayland;xcb"}, "linux", False),
        ({}, "darwin", False),
        ({}, "win32", False),
    ],
)
def test_only_the_xcb_platform_is_checked(env: dict[str, str], platform: str, expected: bool):
    assert uses_xcb(env, platform) is expected


@pytest.mark.parametrize(
    ("env", "fine"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, True),
        ({}, False),
        ({"DISPLAY": ""}, False),
    ],
)
def test_a_session_without_a_display_is_named(env: dict[str, str], fine: bool):
    problem = display_problem(env)
    assert (problem is None) is fine
    if problem is not None:
        assert "DISPLAY" in problem and "xvfb-run" in problem


def test_offscreen_or_another_platform_is_never_blocked(capsys: pytest.CaptureFixture[str]):
    assert main([], {"QT_QPA_PLATFORM": "offscreen"}) == 0
    assert capsys.readouterr().err == ""


def test_the_package_table_names_the_libraries_the_readme_lists():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for package in sorted(set(DEBIAN_PACKAGES.values())):
        assert package in readme, package
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "xvfb"):
        assert package in ci


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb check runs on Linux")
def test_make_runs_it_as_a_module_and_it_names_what_a_fake_ldd_misses(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ldd"
    fake.write_text("#!/bin/sh\necho '\tlibxcb-keysyms.so.1 => not found'\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["DISPLAY"] = ":99"
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        [sys.executable, "-m", "desktop.preflight"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "libxcb-keysyms.so.1 (package libxcb-keysyms1)" in done.stderr
    assert "sudo apt-get install libxcb-keysyms1" in done.stderr
    assert "needs a display" not in done.stderr
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "-m desktop.preflight" in makefile
