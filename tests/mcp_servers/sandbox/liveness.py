"""Seeing from outside whether any process of a sandbox run is still alive.

A program's pid means nothing outside its PID namespace, and its processes may run as another
uid, so the tests watch two things instead:

- a lock: the program takes an exclusive ``flock`` on ``alive.lock`` in its run folder first
  thing; every process it forks inherits the open file, and the kernel releases the lock only
  when the last of them has died (or closed it);
- the PID namespace: a program writes ``/proc/self/ns/pid`` to a file, and the test looks for
  host processes in that namespace.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio

T = TypeVar("T")

HOLD_LOCK = """\
import fcntl as _fcntl, os as _os
_alive = _os.open("alive.lock", _os.O_CREAT | _os.O_RDWR)
_fcntl.flock(_alive, _fcntl.LOCK_EX)
open("locked", "w").close()
"""


def lock_held(run_dir: Path) -> bool:
    """True while some process of the run still holds ``alive.lock``."""
    try:
        fd = os.open(run_dir / "alive.lock", os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def processes_in(pid_namespace: str) -> set[int]:
    """Host pids of the live processes in the PID namespace named like ``pid:[4026532]``."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "ns" / "pid") != pid_namespace:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.add(int(entry.name))
    return found


async def poll(check: Callable[[], T | None], within: float = 20) -> T:
    """Wait for a condition in another process, where no event can be shared; bounded."""
    with anyio.fail_after(within):
        while True:
            value = check()
            if value is not None:
                return value
            await anyio.sleep(0.02)


def run_with(workdir: Path, marker: str) -> Path | None:
    """The run folder of ``workdir`` where the program has written ``marker``, if any yet."""
    for path in workdir.glob(f"run-*/{marker}"):
        return path.parent
    return None


async def all_gone(run_dir: Path, pid_namespace: str | None = None, within: float = 5) -> None:
    """Wait until no process of the run is left; fail after ``within`` seconds."""

    def gone() -> bool | None:
        if lock_held(run_dir):
            return None
        if pid_namespace is not None and processes_in(pid_namespace):
            return None
        return True

    await poll(gone, within)
