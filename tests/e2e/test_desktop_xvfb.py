"""Smoke test on a real X server (Xvfb, not offscreen): the real app and sidecar start, a message
is sent, the approval is answered with the keyboard, and Ctrl+Q quits.

Skips, saying why, where Xvfb is not installed (fails instead under ATRIUM_REQUIRE_PEERS=1,
as in CI, where .ci/run installs it) or where the Qt xcb libraries are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.preflight import find_missing, report
from tests.peers import peer_unavailable

REPO = Path(__file__).resolve().parents[2]
DRIVER_TIMEOUT_S = 180

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Xvfb and the xcb platform are Linux only"
)


@pytest.fixture
def display() -> Iterator[str]:
    """A fresh Xvfb server; its display name (e.g. ':3')."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        peer_unavailable(
            "Xvfb is not installed (apt-get install xvfb); the real-X test did not run"
        )
    import PySide6

    missing = find_missing(Path(PySide6.__file__).parent)
    if missing:
        peer_unavailable(report(missing))
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()  # Xvfb writes the display number once it is ready
        if not number:
            stderr = server.stderr.read().decode(errors="replace") if server.stderr else ""
            pytest.fail(f"Xvfb did not start: {stderr[-2000:]}")
        yield f":{number}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stderr is not None:
            server.stderr.close()


def test_on_a_real_x_server_a_message_is_sent_approved_by_keyboard_and_ctrl_q_quits(
    display: str, tmp_path: Path
):
    out = tmp_path / "seen.json"
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", XDG_CONFIG_HOME=str(tmp_path / "config"))
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.xvfb_window", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert out.exists(), done.stderr[-4000:]
    seen = json.loads(out.read_text())
    assert seen["platform"] == "xcb"
    assert done.returncode == 0, (seen, done.stderr[-4000:])
    assert seen["steps"] == [
        "initialized",
        "sent",
        "dialog",
        "dialog_active",
        "approved_by_enter",
        "answered",
        "ctrl_q",
    ]
    assert seen["dialog_title"].startswith("Approve")
    assert seen["written"] == "It began.\n"
    assert "The first chapter is written." in seen["transcript"]
