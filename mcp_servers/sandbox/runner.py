"""Run Python code in a confined child process (parent side).

Each run gets a fresh directory ``<workdir>/run-<id>/`` holding ``main.py``, used as the child's
cwd, HOME and (via ``.tmp``) TMPDIR. The child is ``<python> -I -S -B -X utf8 _bootstrap.py``
(isolated mode: no ``PYTHON*`` variables, no site-packages, no user site; standard library only),
started in its own session so the whole process group can be killed. Its environment is built from
scratch, so no API key or other secret of the author's leaks in. The bootstrap applies the kernel
limits and the guard (see :mod:`._bootstrap`) and reports the layers it applied on a status pipe.

The parent enforces the wall-clock timeout (SIGTERM to the group, SIGKILL after a short grace),
caps captured output, and always SIGKILLs the group on the way out, including when the MCP request
is cancelled.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from .models import Isolation, RunResult

BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class SandboxSettings:
    """Per-run limits and the interpreter to run. ``timeout_s`` also caps what a caller may ask.

    ``python`` defaults to the server's own interpreter; a frozen (PyInstaller) build must point it
    at a real Python 3 interpreter.
    """

    timeout_s: float = 30.0
    memory_mb: int = 512
    cpu_s: int | None = None
    max_output_bytes: int = 100_000
    file_size_mb: int = 64
    kill_grace_s: float = 1.0
    python: str | None = None

    def cpu_seconds(self, timeout_s: float) -> int:
        """CPU-time limit: explicit, else the run's wall-clock timeout rounded up, plus one."""
        return self.cpu_s if self.cpu_s is not None else math.ceil(timeout_s) + 1


class _Capture:
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


def prepare_run(workdir: Path, code: str) -> Path:
    """Create a fresh run directory with the code in ``main.py``; return its path."""
    run_dir = workdir / f"run-{secrets.token_hex(6)}"
    run_dir.mkdir(mode=0o700)
    (run_dir / ".tmp").mkdir(mode=0o700)
    (run_dir / "main.py").write_text(code, encoding="utf-8")
    return run_dir


async def run_python(
    workdir: Path, code: str, *, timeout_s: float, stdin: str | None, limits: SandboxSettings
) -> RunResult:
    """Run ``code`` in a new run directory under ``workdir`` and report what happened.

    Raises:
        OSError: If the run directory cannot be created or the child cannot be started.
    """
    run_dir = prepare_run(workdir, code)
    config: dict[str, object] = {
        "run_dir": str(run_dir),
        "code_path": str(run_dir / "main.py"),
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": limits.cpu_seconds(timeout_s),
        "file_bytes": limits.file_size_mb * 1024 * 1024,
    }
    started = anyio.current_time()
    outcome = await _run_child(run_dir, config, stdin, timeout_s, limits)
    code_rc, out, err, timed_out, status = outcome
    return RunResult(
        exit_code=code_rc,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
        killed_reason=killed_reason(code_rc, timed_out=timed_out),
        duration_s=round(anyio.current_time() - started, 3),
        stdout_truncated=out.dropped > 0,
        stderr_truncated=err.dropped > 0,
        timeout_s=timeout_s,
        run_dir=run_dir.name,
        isolation=status,
    )


def killed_reason(exit_code: int, *, timed_out: bool) -> str | None:
    """Why the child died: ``timeout``, ``cpu_time``, ``signal:<NAME>``, or None."""
    if timed_out:
        return "timeout"
    if exit_code >= 0:
        return None
    if exit_code == -signal.SIGXCPU:
        return "cpu_time"
    try:
        return f"signal:{signal.Signals(-exit_code).name}"
    except ValueError:
        return f"signal:{-exit_code}"


async def _run_child(
    run_dir: Path,
    config: Mapping[str, object],
    stdin: str | None,
    timeout_s: float,
    limits: SandboxSettings,
) -> tuple[int, _Capture, _Capture, bool, Isolation]:
    status_r, status_w = os.pipe()
    try:
        process = await _spawn(
            interpreter(limits.python),
            run_dir,
            config,
            status_fd=status_w,
            piped_stdin=stdin is not None,
        )
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    out, err = _Capture(limits.max_output_bytes), _Capture(limits.max_output_bytes)
    timed_out, status = False, Isolation(network=[], filesystem=[])
    try:
        timed_out = await _supervise(
            process, out, err, stdin=stdin, timeout_s=timeout_s, grace_s=limits.kill_grace_s
        )
    finally:
        with anyio.CancelScope(shield=True):
            await _reap(process)
            status = _read_status(status_r)
    exit_code = process.returncode if process.returncode is not None else -signal.SIGKILL
    return exit_code, out, err, timed_out, status


CHILD_FLAGS = ("-I", "-S", "-B", "-X", "utf8")


def interpreter(python: str | None) -> list[str]:
    """How to start the child's Python: the configured interpreter, this one, or, in a bundled
    app (which has no `python`), the bundle's own executable in its `--python` role."""
    if python:
        return [python]
    if getattr(sys, "frozen", False):
        return [sys.executable, "--python"]
    return [sys.executable]


async def _spawn(
    python: list[str],
    run_dir: Path,
    config: Mapping[str, object],
    *,
    status_fd: int,
    piped_stdin: bool,
) -> Process:
    """Start the bootstrap in its own session (so its process group can be killed)."""
    argument = json.dumps({**config, "status_fd": status_fd, "parent_pid": os.getpid()})
    return await anyio.open_process(
        [*python, *CHILD_FLAGS, str(BOOTSTRAP), argument],
        stdin=subprocess.PIPE if piped_stdin else subprocess.DEVNULL,
        cwd=run_dir,
        env=child_env(run_dir),
        start_new_session=True,
        pass_fds=(status_fd,),
    )


async def _supervise(
    process: Process,
    out: _Capture,
    err: _Capture,
    *,
    stdin: str | None,
    timeout_s: float,
    grace_s: float,
) -> bool:
    """Pump output while waiting for exit or the timeout; return True if it timed out."""
    timed_out = False
    async with anyio.create_task_group() as tg:
        assert process.stdout is not None and process.stderr is not None
        tg.start_soon(_pump, process.stdout, out)
        tg.start_soon(_pump, process.stderr, err)
        if stdin is not None and process.stdin is not None:
            tg.start_soon(_feed, process.stdin, stdin.encode("utf-8"))
        timed_out = await _wait_or_kill(process, timeout_s, grace_s)
        # Anything left in the group still holds the pipes open; end it so the pumps see EOF.
        _signal_group(process.pid, signal.SIGKILL)
    return timed_out


async def _wait_or_kill(process: Process, timeout_s: float, grace_s: float) -> bool:
    with anyio.move_on_after(timeout_s):
        await process.wait()
        return False
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(grace_s):
        await process.wait()
        return True
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()
    return True


async def _pump(stream: ByteReceiveStream, capture: _Capture) -> None:
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


def _read_status(fd: int) -> Isolation:
    """Read the bootstrap's report of applied layers (empty if it died before reporting)."""
    try:
        os.set_blocking(fd, False)
        raw = os.read(fd, 65536)
    except OSError:
        raw = b""
    finally:
        os.close(fd)
    try:
        status = json.loads(raw)
        return Isolation(network=status["network"], filesystem=status["filesystem"])
    except (ValueError, KeyError, TypeError):
        return Isolation(network=[], filesystem=[])
