"""Per-server diagnostics: the tail of its stderr, a protocol log, and a watch on its stream.

The protocol log records what crossed the wire (method, id, error code) and what the supervisor
did (starting, ready, crashed, backoff), never arguments or results. Both are redacted of the
server's secrets. The watch wraps any MCP transport so the supervisor learns at once when the
stream ends (the server died or hung up), instead of when the next call times out.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio

from sidecar.host.secrets import Redactor

if TYPE_CHECKING:
    from mcp.client._transport import Transport, TransportStreams

Direction = Literal["out", "in", "host"]


@dataclass(frozen=True, slots=True)
class ProtocolLogEntry:
    at: float
    direction: Direction
    text: str


class ProtocolLog:
    """A bounded log of messages and supervisor events."""

    def __init__(self, limit: int = 500) -> None:
        self.entries: deque[ProtocolLogEntry] = deque(maxlen=limit)
        self.redact = Redactor()

    def add(self, direction: Direction, text: str) -> None:
        self.entries.append(ProtocolLogEntry(time.time(), direction, self.redact(text)))

    def message(self, direction: Direction, message: object) -> None:
        self.add(direction, describe(message))


def describe(message: object) -> str:
    """A one-line summary of a JSON-RPC message: kind, id, method, tool name, error."""
    inner: Any = getattr(message, "message", message)
    inner = getattr(inner, "root", inner)
    if isinstance(inner, Exception):
        return f"unreadable message: {type(inner).__name__}: {inner}"
    method = getattr(inner, "method", None)
    ident = getattr(inner, "id", None)
    error = getattr(inner, "error", None)
    if method is not None:
        params: Any = getattr(inner, "params", None)
        name = cast(dict[str, Any], params).get("name") if isinstance(params, dict) else None
        target = f" {name}" if isinstance(name, str) else ""
        kind = "request" if ident is not None else "notification"
        return f"{kind} {ident if ident is not None else ''} {method}{target}".replace("  ", " ")
    if error is not None:
        return f"error {ident} {getattr(error, 'code', '?')}: {getattr(error, 'message', '')}"
    return f"result {ident}"


class StderrTail:
    """The last lines a server wrote to stderr, across its launches, redacted of its secrets."""

    def __init__(self, limit: int = 300) -> None:
        self.lines: deque[str] = deque(maxlen=limit)
        self.redact = Redactor()
        self.launches = 0
        self._added = asyncio.Event()

    def begin_launch(self) -> None:
        self.launches += 1
        self.lines.append(f"--- launch {self.launches} at {time.strftime('%H:%M:%S')} ---")

    def add(self, line: str) -> None:
        self.lines.append(self.redact(line))
        self._added.set()

    async def wait_for(self, text: str) -> None:
        """Wait until a line containing `text` is in the tail."""
        while not any(text in line for line in self.lines):
            self._added.clear()
            await self._added.wait()

    def last_line(self) -> str | None:
        for line in reversed(self.lines):
            if line.strip() and not line.startswith("--- launch"):
                return line
        return None


class WatchedTransport:
    """Wraps a transport: logs every message both ways and sets `closed` when the server's
    side of the stream ends."""

    def __init__(self, inner: Transport, log: ProtocolLog) -> None:
        self._inner = inner
        self.log = log
        self.closed = asyncio.Event()

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        watched_read: Any = _WatchedRead(read, self)
        watched_write: Any = _WatchedWrite(write, self.log)
        return watched_read, watched_write

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self.closed.set()
        return await self._inner.__aexit__(exc_type, exc, tb)


class _WatchedRead:
    def __init__(self, inner: Any, watch: WatchedTransport) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._watch.closed.set()
            raise
        self._watch.log.message("in", item)
        return item

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _WatchedWrite:
    def __init__(self, inner: Any, log: ProtocolLog) -> None:
        self._inner = inner
        self._log = log

    async def send(self, item: Any, /) -> None:
        self._log.message("out", item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedWrite:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
