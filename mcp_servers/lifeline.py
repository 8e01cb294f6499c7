"""A built-in MCP server dies with the process that started it.

A stdio server notices a dead client only when it next reads its stdin, and a server busy with a
call (a sandbox program that sleeps, a strong agent's CLI) may not read for minutes; a killed
sidecar then leaves it running. So each built-in server asks the kernel for a signal when its
parent dies (Linux ``PR_SET_PDEATHSIG``; elsewhere a thread that watches the parent pid), and
turns SIGTERM into an orderly exit: the running calls are cancelled, which stops their child
processes. An orderly exit can hang: the interpreter waits for its worker threads, and one
blocked in a read that never returns keeps it waiting for good (seen as a sandbox or agents
server left sleeping in a futex after a killed sidecar, about one run in six). So SIGTERM also
starts a timer that ends the process outright after EXIT_GRACE_S. Standard library only.
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
EXIT_GRACE_S = 5.0


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
    timer = threading.Timer(EXIT_GRACE_S, os._exit, args=(128 + signum,))
    timer.daemon = True
    timer.start()
    # SystemExit unwinds the event loop: every task (each running call) is cancelled and its
    # clean-up (killing a sandbox program's process group, a CLI's session) runs.
    raise SystemExit(128 + signum)
