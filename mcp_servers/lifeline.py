"""A built-in MCP server dies with the process that started it.

A stdio server notices a dead client only when it next reads its stdin, and a server busy with a
call (a sandbox program that sleeps, a strong agent's CLI) may not read for minutes; a killed
sidecar then leaves it running. So each built-in server asks the kernel for a signal when its
parent dies (Linux ``PR_SET_PDEATHSIG``; elsewhere a thread that watches the parent pid), and
turns SIGTERM into an orderly exit: the running calls are cancelled, which stops their child
processes. Standard library only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from types import FrameType

_PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.5


def die_with_parent() -> None:
    """Arrange for SIGTERM when the parent process dies, and exit cleanly on SIGTERM.

    Call it first thing in a server's ``main``, on the main thread.
    """
    parent = os.getppid()
    signal.signal(signal.SIGTERM, _exit_on_term)
    if not _kernel_lifeline():
        threading.Thread(target=_watch, args=(parent,), name="lifeline", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the lifeline was in place
        os.kill(os.getpid(), signal.SIGTERM)


def _kernel_lifeline() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL_S)
    with contextlib.suppress(ProcessLookupError):
        os.kill(os.getpid(), signal.SIGTERM)


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    del frame
    # SystemExit unwinds the event loop: every task (each running call) is cancelled and its
    # clean-up (killing a sandbox program's process group, a CLI's session) runs.
    raise SystemExit(128 + signum)
