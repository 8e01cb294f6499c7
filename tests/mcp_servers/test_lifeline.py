"""A built-in server dies with its parent even when it never reads its stdin again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The grandchild installs the lifeline and then sleeps without touching stdin, like a server
# busy in a long call; the parent prints the grandchild's pid and waits.
GRANDCHILD = (
    "from mcp_servers.lifeline import die_with_parent\n"
    "die_with_parent()\n"
    "import time\n"
    "time.sleep(120)\n"
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# A grandchild whose orderly exit hangs: a worker thread blocked for good, which the
# interpreter waits for at exit (as a thread pool's worker reading a pipe would).
HANGING_GRANDCHILD = (
    "from mcp_servers.lifeline import die_with_parent\n"
    "die_with_parent()\n"
    "import threading, time\n"
    "threading.Thread(target=threading.Event().wait).start()\n"
    "time.sleep(120)\n"
)


def _parent(grandchild: str) -> str:
    return (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {grandchild!r}],"
        " stdin=subprocess.DEVNULL)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(120)\n"
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("grandchild", [GRANDCHILD, HANGING_GRANDCHILD], ids=["idle", "hanging"])
def test_a_server_whose_parent_is_killed_exits(tmp_path: Path, grandchild: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _parent(grandchild)], stdout=subprocess.PIPE, cwd=REPO, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    time.sleep(0.5)  # let the grandchild install its lifeline
    assert _alive(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 20
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
