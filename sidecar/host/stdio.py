"""A stdio MCP transport that reads in linear time, exposes its process, and keeps a stderr tail.

Why not the SDK's `mcp.client.stdio.stdio_client`: its `stdout_reader` does
`lines = (buffer + chunk).split("\\n")` for every 64 KiB chunk, so a line of n bytes is copied
and re-scanned n / 64 KiB times: O(n²) (an 8 MB result spent ~0.3 s in `str.split` alone and
~1 s in all). Here stdout is read as bytes, each chunk is scanned for newlines once from where the
last scan stopped, the pieces of an unfinished line are kept in a list and joined once, and each
complete line is parsed once, straight from bytes, into the SDK's JSON-RPC message type.

Everything else follows `stdio_client`: the server runs in its own session / process group with
only the SDK's default environment variables plus `params.env`; shutdown closes stdin, waits,
then SIGTERMs and SIGKILLs the group. On top: the process id, a tail of its stderr (and an
optional per-line callback), and death detection: when the process exits, the read stream
closes at once (after a short drain) so in-flight requests fail instead of hanging.

The fork builds on the SDK's private `mcp.client._transport.TransportStreams`.
tests/sidecar/host/test_stdio_upstream.py fails when the SDK's reader stops being quadratic (then
drop this module) or when that private type moves (then follow it).
"""

from __future__ import annotations

import codecs
import logging
import subprocess
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import TextIO

import anyio
import anyio.lowlevel
import mcp_types
from anyio.abc import AsyncResource, ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from sidecar.host.stdio_process import (
    FORCE_KILL_TIMEOUT,
    close_subprocess_transport,
    terminate_group,
    wait_process_exit,
)
from sidecar.protocol.ndjson import LineSplitter, LineTooLongError

__all__ = ["StderrLineSplitter", "StdioTransport"]

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""A JSON-RPC message from a server longer than this is refused (reported, not buffered)."""
READ_SIZE = 1 << 20
"""Bytes asked for per read; the pipe hands over what it has, up to this."""
STDERR_LINE_LIMIT = 8192
"""A stderr line longer than this is cut into pieces, so a runaway writer cannot fill memory."""
PROCESS_TERMINATION_TIMEOUT = 2.0
"""Grace for the server to exit on its own after its stdin closes (as the SDK)."""
WRITER_FLUSH_TIMEOUT = 0.5
"""For already accepted messages to reach stdin at shutdown (as the SDK)."""
EXIT_DRAIN_TIMEOUT = 0.2
"""After the process exits, how long its stdout may still deliver before the read stream closes
(a child that inherited the pipe would otherwise keep it open forever)."""

_Reader = MemoryObjectSendStream[SessionMessage | Exception]


class StderrLineSplitter:
    """Splits the server's stderr into lines in linear time, cutting a runaway line into pieces
    (its stdout, JSON-RPC messages, goes through the one NDJSON splitter,
    `sidecar.protocol.ndjson`, which refuses an oversized message instead).

    Each byte is scanned for the separator once; the pieces of a line spanning chunks are kept
    and joined once when it ends. `scanned` and `copied` count bytes, so tests can prove it.
    With `max_line`, a line that grows past it is emitted in pieces of at least that size.
    """

    def __init__(self, max_line: int | None = None) -> None:
        self._parts: list[bytes] = []
        self._pending = 0
        self._max_line = max_line
        self.scanned = 0
        self.copied = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completes, without their newline."""
        lines: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self.scanned += end + 1 - start
            lines.append(self._finish(chunk[start:end]))
            start = end + 1
        self.scanned += len(chunk) - start
        if start < len(chunk):
            rest = chunk[start:] if start else chunk
            self.copied += len(rest) if start else 0
            self._parts.append(rest)
            self._pending += len(rest)
            if self._max_line is not None and self._pending >= self._max_line:
                lines.append(self._finish(b""))
        return lines

    def flush(self) -> bytes:
        """Whatever followed the last newline (at end of stream)."""
        return self._finish(b"") if self._parts else b""

    def _finish(self, tail: bytes) -> bytes:
        self.copied += len(tail)
        if not self._parts:
            return tail
        self._parts.append(tail)
        line = b"".join(self._parts)
        self.copied += len(line)
        self._parts.clear()
        self._pending = 0
        return line


class StdioTransport:
    """Runs an MCP server as a subprocess and talks to it over stdin/stdout.

    Use it wherever `stdio_client(params)` would go: `Client(StdioTransport(params), ...)`.
    One use only; it may be built anywhere, even outside the event loop, but is entered in it.
    `pid`, `returncode`, `stderr_tail` and `wait_exit()` serve a supervisor.

    Args:
        params: what to launch, exactly as for the SDK (command, args, env, cwd, encoding).
        errlog: where to copy the server's stderr lines, if anywhere (the SDK's default is
            `sys.stderr`; here stderr is always captured, so the tail is kept).
        on_stderr: called with each stderr line (UTF-8, undecodable bytes replaced, no newline)
            in the event loop; lines longer than STDERR_LINE_LIMIT bytes come in pieces.
        stderr_tail_lines: how many of the last stderr lines `stderr_tail` keeps.
    """

    def __init__(
        self,
        params: StdioServerParameters,
        *,
        errlog: TextIO | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stderr_tail_lines: int = 200,
    ) -> None:
        self.params = params
        self._errlog = errlog
        self._on_stderr = on_stderr
        self._tail: deque[str] = deque(maxlen=stderr_tail_lines)
        self._process: Process | None = None
        self._stack: AsyncExitStack | None = None
        self._exited: anyio.Event | None = None
        self._hurried = False
        self._decode_line = _line_decoder(params)
        self._transcode = _needs_transcoding(params.encoding)

    @property
    def pid(self) -> int | None:
        """The server's process id (also its process group id); None before it started."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited (negative: killed by that signal)."""
        return self._process.returncode if self._process is not None else None

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr, oldest first."""
        return list(self._tail)

    async def wait_exit(self) -> int | None:
        """Wait until the server process has exited; its exit status.

        Raises:
            RuntimeError: the transport was never entered.
        """
        if self._exited is None:
            raise RuntimeError("the transport has not started")
        await self._exited.wait()
        return self.returncode

    def hurry(self) -> None:
        """End without waiting for the server to exit by itself once its stdin closes: SIGTERM
        at once (SIGKILL after FORCE_KILL_TIMEOUT). For a server still starting, which has no
        session to finish: a Python server busy importing would otherwise hold the sidecar's
        own shutdown for seconds."""
        self._hurried = True

    async def __aenter__(self) -> TransportStreams:
        if self._stack is not None:
            raise RuntimeError("a StdioTransport can be entered only once")
        self._stack = AsyncExitStack()
        return await self._stack.enter_async_context(self._run())

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._stack is not None, "exit without enter"
        return await self._stack.__aexit__(exc_type, exc, tb)

    @asynccontextmanager
    async def _run(self) -> AsyncGenerator[TransportStreams, None]:
        params = self.params
        process = await anyio.open_process(
            [params.command, *params.args],
            env=get_default_environment() | (params.env or {}),
            cwd=params.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        # No awaits until the task group is entered, or a cancellation here would leak it.
        live = _Live(process, anyio.Event(), anyio.Event(), anyio.CancelScope())
        self._process, self._exited = process, live.exited
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        writer_done = anyio.Event()
        # Shielded from the caller's cancellation: shutdown needs the exit watcher and the drain.
        scopes = [anyio.CancelScope(shield=True) for _ in range(4)]
        async with anyio.create_task_group() as tg:
            tg.start_soon(_within, scopes[0], partial(self._pump_stdout, live, read_writer))
            tg.start_soon(
                _within, scopes[1], partial(self._pump_stdin, live, write_reader, writer_done)
            )
            tg.start_soon(_within, scopes[2], partial(self._pump_stderr, live))
            tg.start_soon(_within, scopes[3], partial(self._watch_exit, live))
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shutdown(live, read_stream, write_stream, writer_done)
                    for stream in (read_stream, write_stream, read_writer, write_reader):
                        await stream.aclose()
                    await anyio.lowlevel.checkpoint()
                for scope in scopes:
                    scope.cancel()

    async def _pump_stdout(self, live: _Live, read_writer: _Reader) -> None:
        """Deliver each complete stdout line once parsed; then drain until the pipe closes."""
        stdout = _pipe(live.process.stdout)
        splitter = LineSplitter(MAX_MESSAGE_BYTES)
        decoder = codecs.getincrementaldecoder(self.params.encoding)(
            self.params.encoding_error_handler
        )
        try:
            with live.reading:
                async with read_writer:
                    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        while True:
                            chunk = await stdout.receive(READ_SIZE)
                            if self._transcode:
                                chunk = decoder.decode(chunk).encode("utf-8")
                            for line in splitter.feed(chunk):
                                if isinstance(line, LineTooLongError):
                                    logger.warning("MCP server (pid %s): %s", self.pid, line)
                                    await read_writer.send(line)
                                elif not line.isspace():
                                    await read_writer.send(self._parse(line))
            # The session is gone: keep a server that is still writing from blocking on the pipe.
            while True:
                await stdout.receive(READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            live.stdout_done.set()

    def _parse(self, line: bytes) -> SessionMessage | Exception:
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(
                self._decode_line(line), by_name=False
            )
        except ValueError as exc:  # pydantic's ValidationError, UnicodeDecodeError
            logger.warning(
                "MCP server (pid %s) wrote a line that is not a JSON-RPC message "
                "(%d bytes, starting %r): %s",
                self.pid,
                len(line),
                line[:80],
                _short(exc),
            )
            return exc
        return SessionMessage(message)

    async def _pump_stdin(
        self,
        live: _Live,
        write_reader: MemoryObjectReceiveStream[SessionMessage],
        done: anyio.Event,
    ) -> None:
        stdin = live.process.stdin
        assert stdin is not None, "spawned with a stdin pipe"
        encoding, errors = self.params.encoding, self.params.encoding_error_handler
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    await stdin.send((text + "\n").encode(encoding, errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server stopped reading: end the read side too, so requests fail at once.
            live.reading.cancel()
        finally:
            done.set()

    async def _pump_stderr(self, live: _Live) -> None:
        stderr = _pipe(live.process.stderr)
        splitter = StderrLineSplitter(max_line=STDERR_LINE_LIMIT)
        with suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
        ):
            while True:
                for line in splitter.feed(await stderr.receive(READ_SIZE)):
                    self._keep_stderr(line)
        if rest := splitter.flush():
            self._keep_stderr(rest)

    def _keep_stderr(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        self._tail.append(line)
        if self._errlog is not None:
            with suppress(OSError, ValueError):
                print(line, file=self._errlog, flush=True)
        if self._on_stderr is not None:
            try:
                self._on_stderr(line)
            except Exception:  # a caller's callback must not end the stderr pump
                logger.exception("on_stderr callback raised")

    async def _watch_exit(self, live: _Live) -> None:
        """Once the process exits, let stdout drain briefly, then end the read stream."""
        await wait_process_exit(live.process)
        live.exited.set()
        with anyio.move_on_after(EXIT_DRAIN_TIMEOUT):
            await live.stdout_done.wait()
        live.reading.cancel()

    async def _shutdown(
        self,
        live: _Live,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
        writer_done: anyio.Event,
    ) -> None:
        """Stop traffic, flush, stop the server and its group, release the pipes."""
        process = live.process
        read_stream.close()  # the stdout pump turns to draining, so a writing server can exit
        write_stream.close()
        with anyio.move_on_after(WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        await _close_quietly(process.stdin)
        with anyio.move_on_after(0.0 if self._hurried else PROCESS_TERMINATION_TIMEOUT):
            await live.exited.wait()
        await terminate_group(process)
        with anyio.move_on_after(FORCE_KILL_TIMEOUT):
            await live.exited.wait()
        if not live.exited.is_set():
            logger.warning("MCP server process %d survived SIGKILL; abandoning it", process.pid)
        await _close_quietly(process.stdout)
        await _close_quietly(process.stderr)
        close_subprocess_transport(process)


@dataclass(frozen=True, slots=True)
class _Live:
    """One running server process and the events of its life (made in the event loop)."""

    process: Process
    exited: anyio.Event
    stdout_done: anyio.Event
    reading: anyio.CancelScope
    """Around the delivery of stdout lines: cancelled to end the read stream early."""


async def _within(scope: anyio.CancelScope, task: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await task()


def _pipe(stream: ByteReceiveStream | None) -> ByteReceiveStream:
    assert stream is not None, "spawned with pipes"
    return stream


async def _close_quietly(stream: AsyncResource | None) -> None:
    if stream is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.aclose()


def _needs_transcoding(encoding: str) -> bool:
    """Whether a newline byte can occur inside a character (UTF-16/32): then split decoded text."""
    return "\n".encode(encoding) != b"\n"


def _line_decoder(params: StdioServerParameters) -> Callable[[bytes], bytes | str]:
    """What to hand pydantic for one line: the bytes themselves when they are strict UTF-8."""
    name = codecs.lookup(params.encoding).name
    if _needs_transcoding(params.encoding) or (
        name == "utf-8" and params.encoding_error_handler == "strict"
    ):
        return lambda line: line  # already UTF-8 (transcoded lines are, too)
    errors = params.encoding_error_handler
    return lambda line: line.decode(params.encoding, errors)


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 300 else text[:300] + "…"
