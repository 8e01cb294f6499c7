"""The process layer: spawn a CLI in its own process group, stream stdout, stop it in stages.

No parsing happens here. Stdout is read in chunks and split with an unbounded line framer (CLI
lines can be many megabytes; a limited `readline` would fail). Stderr is drained concurrently so
the CLI never blocks on a full pipe. Stopping is a list of steps (close stdin, SIGINT, SIGTERM,
SIGKILL), each followed by a grace period, with signals sent to the whole process group because
the CLIs spawn shells and tools of their own.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import anyio.abc

from mcp_servers.agents.providers import not_installed
from mcp_servers.agents.results import ErrorCode, NormalizedError

READ_CHUNK = 64 * 1024
STDERR_TAIL_BYTES = 16 * 1024


class SpawnError(Exception):
    """The CLI could not be started; `error` is the normalized cause."""

    def __init__(self, error: NormalizedError) -> None:
        super().__init__(error.message)
        self.error = error


class LineFramer:
    """Splits a byte stream into lines with no length limit (scans each byte once)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add a chunk; return the complete lines it finished (without the newline)."""
        self._buffer += chunk
        lines: list[bytes] = []
        start = 0
        while (end := self._buffer.find(b"\n", max(start, self._scanned))) >= 0:
            lines.append(bytes(self._buffer[start:end]))
            start = end + 1
        del self._buffer[:start]
        self._scanned = len(self._buffer)
        return lines

    def flush(self) -> bytes | None:
        """The unterminated last line at end of stream, if any."""
        if not self._buffer:
            return None
        rest = bytes(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return rest


@dataclass(frozen=True)
class StopStep:
    """One stage of stopping a process, then up to `grace_s` seconds to wait for its exit."""

    action: Literal["close_stdin", "sigint", "sigterm", "sigkill"]
    grace_s: float


_SIGNALS = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}


class AgentProcess:
    """A running CLI: its own session/process group, piped stdout/stderr, optional stdin pipe."""

    def __init__(self, process: anyio.abc.Process, argv: Sequence[str]) -> None:
        self._process = process
        self.argv = tuple(argv)
        self._stdin_lock = anyio.Lock()
        self._stderr_tail = bytearray()

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin_pipe: bool
    ) -> AgentProcess:
        """Start `argv` in `cwd` as a new session (process group leader).

        Raises:
            SpawnError: the working directory is missing, the executable cannot be found, or
                the OS refused to start it.
        """
        if not cwd.is_dir():
            raise SpawnError(_spawn_error(ErrorCode.SPAWN_FAILED, f"no such directory: {cwd}"))
        try:
            process = await anyio.open_process(
                list(argv),
                stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            error = NormalizedError(
                code=ErrorCode.CLI_NOT_FOUND,
                message=not_installed(argv[0]),
                detail={"os_error": str(exc)},
            )
            raise SpawnError(error) from exc
        except OSError as exc:
            raise SpawnError(_spawn_error(ErrorCode.SPAWN_FAILED, str(exc))) from exc
        return cls(process, argv)

    @property
    def pid(self) -> int:
        """The CLI's pid, which is also its process-group id."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once the process has exited (negative: killed by that signal)."""
        return self._process.returncode

    @property
    def stderr_tail(self) -> str:
        """The last few KiB the CLI wrote to stderr."""
        return self._stderr_tail.decode("utf-8", errors="replace")

    async def stdout_lines(self) -> AsyncIterator[str]:
        """Every stdout line, decoded (invalid UTF-8 replaced), without its newline."""
        stdout = self._process.stdout
        if stdout is None:
            return
        framer = LineFramer()
        while True:
            try:
                chunk = await stdout.receive(READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
            for line in framer.feed(chunk):
                yield line.decode("utf-8", errors="replace")
        rest = framer.flush()
        if rest is not None:
            yield rest.decode("utf-8", errors="replace")

    async def drain_stderr(self, sink: Callable[[bytes], None]) -> None:
        """Read stderr to EOF, passing every chunk to `sink` and keeping a tail."""
        stderr = self._process.stderr
        if stderr is None:
            return
        while True:
            try:
                chunk = await stderr.receive(READ_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            sink(chunk)
            self._stderr_tail += chunk
            del self._stderr_tail[:-STDERR_TAIL_BYTES]

    async def write_line(self, line: str) -> bool:
        """Write one line to stdin; False if stdin is closed or the process is gone."""
        stdin = self._process.stdin
        if stdin is None:
            return False
        async with self._stdin_lock:
            try:
                await stdin.send(line.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return False
        return True

    async def close_stdin(self) -> None:
        """Send EOF on stdin (the polite way to end a stream-json CLI)."""
        stdin = self._process.stdin
        if stdin is None:
            return
        async with self._stdin_lock:
            try:
                await stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                return

    def signal_group(self, signum: int) -> bool:
        """Send `signum` to the whole process group; False if nothing was left to signal."""
        try:
            os.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def wait_exit(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the process to exit; True if it did."""
        with anyio.move_on_after(timeout_s):
            await self._process.wait()
            return True
        return False

    async def stop(self, steps: Sequence[StopStep]) -> int | None:
        """Run the stop steps in order until the process exits; return its exit code."""
        for step in steps:
            if self.returncode is not None:
                break
            if step.action == "close_stdin":
                await self.close_stdin()
            else:
                self.signal_group(_SIGNALS[step.action])
            if await self.wait_exit(step.grace_s):
                break
        return self.returncode

    def kill_group(self) -> None:
        """SIGKILL whatever is left in the process group (children that outlived the CLI)."""
        self.signal_group(signal.SIGKILL)

    async def aclose(self) -> None:
        """Kill the group if the CLI is still running, reap it, and close the pipes."""
        if self.returncode is None:
            self.kill_group()
        await self._process.aclose()


def _spawn_error(code: ErrorCode, message: str) -> NormalizedError:
    return NormalizedError(code=code, message=message)
