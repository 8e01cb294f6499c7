"""What the coalescing streaming engines share: reading a streamed body at most once per window,
its server-sent event lines, and closing every engine's connections.

A model streams one event per token; DSPy's stream listener, LangGraph's stream and the wire
cost tens of microseconds each per event they see. So the engines (`_stream_engine` for
OpenAI-compatible endpoints, `_anthropic_engine` for Anthropic's) read the socket in a task of
their own and pass on what arrived at most once every `READ_WINDOW_S`: the first read after a
quiet spell at once, later ones with everything that arrived meanwhile. Nothing is held back
longer than one window, however fast or slow the model streams.
"""

# DSPy ships no type information (no py.typed).
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Protocol

import anyio
from dspy import lm15

from sidecar.protocol.ndjson import LineSplitter, LineTooLongError

READ_WINDOW_S = 0.010
MAX_EVENT_BYTES = 16 * 1024 * 1024

Lines = list[bytes | LineTooLongError]


class Closable(Protocol):
    async def aclose(self) -> None: ...


# Every engine until `aclose_all`: one dropped with its connections open would leave its
# sockets to the garbage collector.
_OPEN: set[Closable] = set()


def track(engine: Closable) -> None:
    """Close `engine` at the next `aclose_all`."""
    _OPEN.add(engine)


async def aclose_all() -> None:
    """Close the connections of every engine built so far (sidecar shutdown, tests)."""
    while _OPEN:
        await _OPEN.pop().aclose()


class _Inbox:
    """Reads the response body in a task of its own into one buffer, so the stream is taken
    off the socket as fast as it comes while its consumer passes it on once per window."""

    def __init__(self, raw: AsyncIterator[bytes]) -> None:
        self._raw = raw
        self._buffer = bytearray()
        self._ended = False
        self._error: BaseException | None = None
        self.arrived = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> _Inbox:
        self._task = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._task is not None:
            self._task.cancel()
            # Shielded: a cancelled anyio scope (DSPy's) would cancel this wait at once.
            with anyio.CancelScope(shield=True), contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _read(self) -> None:
        try:
            async for data in self._raw:
                self._buffer += data
                self.arrived.set()
        except Exception as exc:  # handed to the consumer, which raises it in its own task
            self._error = exc
        self._ended = True
        self.arrived.set()

    def take(self) -> tuple[bytes, bool]:
        """Everything read so far, and whether the body has ended.

        Raises:
            Exception: whatever reading the body raised.
        """
        data = bytes(self._buffer)
        self._buffer.clear()
        self.arrived.clear()
        if self._error is not None:
            raise self._error
        return data, self._ended


async def windows(raw: AsyncIterator[bytes]) -> AsyncGenerator[Lines]:
    """The body's lines, one list per window, until the body ends. Close the generator
    (`contextlib.aclosing`) to stop reading early.

    Raises:
        Exception: whatever reading the body raised, in the window that would have held it.
    """
    splitter = LineSplitter(MAX_EVENT_BYTES)
    last_pass = 0.0
    async with _Inbox(raw) as inbox:
        done = False
        while not done:
            await inbox.arrived.wait()
            wait = last_pass + READ_WINDOW_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)  # the window: let more arrive before passing on
            last_pass = time.monotonic()
            data, done = inbox.take()
            lines = splitter.feed(data)
            if done:
                lines += splitter.finish()
            yield lines


def sse_data(lines: Lines) -> Iterator[bytes]:
    """The payloads of the `data:` lines, stripped; other SSE fields are skipped.

    Raises:
        lm15.ProviderError: a line longer than `MAX_EVENT_BYTES`.
    """
    for line in lines:
        if isinstance(line, LineTooLongError):
            raise lm15.ProviderError(f"a streamed event was too large: {line}")
        if line.startswith(b"data:"):
            yield line[5:].strip()
