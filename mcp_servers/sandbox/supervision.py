"""The lifetime of one sandbox child: start it confined, watch it, end it and all it started.

The child is started in its own session. While it runs, its output is captured (capped), its
bootstrap's status pipe is read (the layers it applied, then the program's exit status) and its
run folder is measured against the disk quota. The run ends at the first of: the program's exit
status, the outer process's exit, the time limit, the quota. Then the whole run is ended: in a
namespace one SIGKILL to the outer process takes the PID namespace and every process in it along
(``guard_only`` and macOS: SIGTERM to the process group, SIGKILL after a short grace on timeout).
The pipes get a bounded moment to drain, and the process group is SIGKILLed again on the way out,
also when the request is cancelled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Coroutine, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process, TaskGroup

from .confinement import Jail
from .folders import Usage, disk_usage
from .settings import SandboxSettings

BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"
CHILD_FLAGS = ("-I", "-S", "-B", "-X", "utf8")
QUOTA_POLL_S = 0.2
DRAIN_S = 2.0
STATUS_LIMIT = 65536


class Capture:
    """Keeps the first ``limit`` bytes of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = max(0, self.limit - len(self.data))
        self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - room)

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... truncated {self.dropped} bytes ...]\n"
        return text


@dataclass
class Outcome:
    """What the supervision of one run found out."""

    layers: dict[str, Any] = field(default_factory=dict[str, Any])
    exit_code: int | None = None
    timed_out: bool = False
    over_quota: Usage | None = None


@dataclass
class Run:
    """One run as the parent sees it: where, within which limits, and what it found out."""

    plan: Jail
    run_dir: Path
    limits: SandboxSettings
    timeout_s: float
    stdin: str | None
    out: Capture
    err: Capture
    outcome: Outcome = field(default_factory=Outcome)


def child_env(run_dir: Path) -> dict[str, str]:
    """The child's whole environment: nothing is inherited from the server."""
    tmp = str(run_dir / ".tmp")
    return {
        "HOME": str(run_dir),
        "TMPDIR": tmp,
        "TMP": tmp,
        "TEMP": tmp,
        "PATH": CHILD_PATH,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


async def run_child(command: list[str], config: Mapping[str, object], run: Run) -> None:
    status_r, status_w = os.pipe()
    try:
        process = await _spawn(
            command, run.run_dir, config, status_fd=status_w, piped_stdin=run.stdin is not None
        )
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    try:
        await _supervise(process, status_r, run)
    finally:
        with anyio.CancelScope(shield=True):
            await _reap(process)
            os.close(status_r)
    if run.outcome.exit_code is None and process.returncode is not None:
        run.outcome.exit_code = process.returncode  # no status: what the outer process reported


async def _spawn(
    command: list[str],
    run_dir: Path,
    config: Mapping[str, object],
    *,
    status_fd: int,
    piped_stdin: bool,
) -> Process:
    """Start the confined bootstrap in its own session (so its process group can be killed)."""
    argument = json.dumps({**config, "status_fd": status_fd})
    return await anyio.open_process(
        [*command, *CHILD_FLAGS, str(BOOTSTRAP), argument],
        stdin=subprocess.PIPE if piped_stdin else subprocess.DEVNULL,
        cwd=run_dir,
        env=child_env(run_dir),
        start_new_session=True,
        pass_fds=(status_fd,),
    )


async def _supervise(process: Process, status_fd: int, run: Run) -> None:
    """Pump output and status while waiting for the program's end, the timeout or the quota;
    then end the whole run and let the pipes drain (bounded)."""
    ended, outcome = anyio.Event(), run.outcome
    async with anyio.create_task_group() as tg:
        assert process.stdout is not None and process.stderr is not None
        drained = [
            _start(tg, _pump(process.stdout, run.out)),
            _start(tg, _pump(process.stderr, run.err)),
            _start(tg, _read_status(status_fd, outcome, ended, run.plan.supervised)),
        ]
        if run.stdin is not None and process.stdin is not None:
            tg.start_soon(_feed, process.stdin, run.stdin.encode("utf-8"))
        tg.start_soon(_set_on_exit, process, ended)
        tg.start_soon(_watch_quota, run, ended)
        with anyio.move_on_after(run.timeout_s):
            await ended.wait()
        if not ended.is_set():
            outcome.timed_out = True
            await _stop(process, run.plan, run.limits.kill_grace_s)
        # Whatever is left (an orphan, a new session) is ended with the run.
        _signal_group(process.pid, signal.SIGKILL)
        with anyio.move_on_after(DRAIN_S):
            await process.wait()
            for done in drained:
                await done.wait()
        tg.cancel_scope.cancel()


def _start(tg: TaskGroup, work: Coroutine[Any, Any, None]) -> anyio.Event:
    """Run ``work`` (a coroutine) in ``tg``; the event is set when it returns."""
    done = anyio.Event()

    async def run() -> None:
        try:
            await work
        finally:
            done.set()

    tg.start_soon(run)
    return done


async def _set_on_exit(process: Process, ended: anyio.Event) -> None:
    await process.wait()
    ended.set()


async def _stop(process: Process, plan: Jail, grace_s: float) -> None:
    """End a run past its time: a namespace at once (nothing in it can be asked nicely from
    here); otherwise SIGTERM the group, then SIGKILL after ``grace_s``."""
    if plan.namespaced:
        _signal_group(process.pid, signal.SIGKILL)
        return
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(grace_s):
        await process.wait()
        return
    _signal_group(process.pid, signal.SIGKILL)


async def _watch_quota(run: Run, ended: anyio.Event) -> None:
    """Measure the run folder every QUOTA_POLL_S; over the quota, end the run."""
    limits = run.limits
    while True:
        usage = await anyio.to_thread.run_sync(disk_usage, run.run_dir, limits.max_files)
        if usage.bytes > limits.quota_bytes or usage.entries > limits.max_files:
            run.outcome.over_quota = usage
            ended.set()
            return
        await anyio.sleep(QUOTA_POLL_S)


async def _read_status(fd: int, outcome: Outcome, ended: anyio.Event, supervised: bool) -> None:
    """Read the bootstrap's JSON lines: the layers, then (supervised) the program's exit status,
    which ends the run. End of the pipe also ends a supervised run (its supervisor is gone)."""
    os.set_blocking(fd, False)
    buffer = bytearray()
    while len(buffer) < STATUS_LIMIT:
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, STATUS_LIMIT)
        except BlockingIOError:
            continue
        except OSError:
            break
        if not chunk:
            break
        buffer += chunk
        *lines, rest = bytes(buffer).split(b"\n")
        buffer = bytearray(rest)
        for line in lines:
            _take_status(line, outcome)
        if outcome.exit_code is not None:
            ended.set()
    if supervised:
        ended.set()


def _take_status(line: bytes, outcome: Outcome) -> None:
    try:
        status = json.loads(line)
    except ValueError:
        return
    if not isinstance(status, dict):
        return
    report: dict[str, Any] = status  # pyright: ignore[reportUnknownVariableType]
    code = report.get("exit_code")
    if isinstance(code, int):
        outcome.exit_code = code
    elif "network" in report:
        outcome.layers = report


async def _pump(stream: ByteReceiveStream, capture: Capture) -> None:
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        async for chunk in stream:
            capture.feed(chunk)


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(data)
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.aclose()


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    """Signal the child's whole process group (its pid is the group id: own session)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def _reap(process: Process) -> None:
    """SIGKILL the group, wait for the leader and close the pipes (runs shielded)."""
    _signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(5):
        await process.wait()
    with suppress(OSError):
        await process.aclose()
