"""The life of a stdio MCP server's process group: noticing its exit at once, and stopping
the whole group (SIGTERM, then SIGKILL for what outlasts the grace)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from contextlib import suppress

import anyio
from anyio.abc import Process

logger = logging.getLogger(__name__)

FORCE_KILL_TIMEOUT = 2.0
"""Between SIGTERM and SIGKILL of the group (as the SDK)."""
EXIT_POLL_INTERVAL = 0.05
"""Where no pidfd exists (not Linux), how often the process is checked for exit."""


async def wait_process_exit(process: Process) -> None:
    """Return once the process has exited: at once via a pidfd on Linux, else by polling."""
    pidfd: int | None = None
    if hasattr(os, "pidfd_open"):
        with suppress(OSError):
            pidfd = os.pidfd_open(process.pid)
    if pidfd is not None:
        try:
            await anyio.wait_readable(pidfd)
        finally:
            os.close(pidfd)
    # asyncio learns the exit status from its child watcher a moment later; nothing signals it.
    while process.returncode is None:  # noqa: ASYNC110
        await anyio.sleep(0.001 if pidfd is not None else EXIT_POLL_INTERVAL)


async def terminate_group(process: Process) -> None:
    """SIGTERM the server's process group if anything in it lives, SIGKILL what outlasts
    FORCE_KILL_TIMEOUT.

    Also after the leader exited on its own: children it left in its group are stopped too.
    """
    if sys.platform == "win32":  # pragma: no cover - the group is a POSIX notion
        if process.returncode is None:
            process.kill()
        return
    pgid = process.pid  # the leader's pid is the group id (start_new_session)
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        logger.warning("no permission to signal some of process group %d", pgid)
    with anyio.move_on_after(FORCE_KILL_TIMEOUT):
        while _group_alive(pgid):
            _ = process.returncode  # lets trio reap a zombie leader
            await anyio.sleep(0.01)
        return
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def close_subprocess_transport(process: Process) -> None:
    """Close asyncio's subprocess transport now; it would warn at GC while a child holds a pipe."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):
            close()
