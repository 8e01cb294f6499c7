"""Line framing on byte streams: the reader splits with the protocol's one NDJSON splitter
(`sidecar.protocol.ndjson`, linear in the input), the writer reports congestion so that streamed
text waits in its producer, coalesced, instead of piling up frame by frame in the pipe's buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from sidecar.protocol import LineSplitter, LineTooLongError

MAX_FRAME_BYTES = 64 * 1024 * 1024
CHUNK = 256 * 1024
# Bytes waiting in the transport above which the writer counts as congested: about a second of
# the window's reading at its slowest, far below anything that would matter for memory.
HIGH_WATER = 256 * 1024


class FrameTooLargeError(ValueError):
    """A line exceeded MAX_FRAME_BYTES; it was discarded up to its newline."""


async def read_frames(
    reader: asyncio.StreamReader, *, max_bytes: int = MAX_FRAME_BYTES
) -> AsyncIterator[bytes | FrameTooLargeError]:
    """Yield each non-blank line (without its newline) until EOF; an oversized line yields a
    `FrameTooLargeError` in its place and reading goes on with the next line."""
    splitter = LineSplitter(max_bytes)
    while True:
        chunk = await reader.read(CHUNK)
        for item in splitter.feed(chunk) if chunk else splitter.finish():
            if isinstance(item, LineTooLongError):
                yield FrameTooLargeError(f"frame larger than {max_bytes} bytes")
            else:
                yield item
        if not chunk:
            return


class FrameWriter:
    """Writes one frame per line. `send` never blocks the caller; a drain task applies
    back-pressure in the background.

    It is also a flow gate (`sidecar.runtime.emitter.FlowGate`): `congested()` is true while more
    than `high_water` bytes wait for the reader, and `when_ready(callback)` calls back once they
    have drained, so producers of mergeable traffic (streamed tokens) hold it meanwhile. Other
    frames (replies, state changes) are still written: their number does not grow with a stream.
    """

    def __init__(self, writer: asyncio.StreamWriter, *, high_water: int = HIGH_WATER) -> None:
        self._writer = writer
        self._high_water = high_water
        self._drain: asyncio.Task[None] | None = None
        self._ready: list[Callable[[], None]] = []
        with contextlib.suppress(NotImplementedError):
            writer.transport.set_write_buffer_limits(high=high_water, low=high_water // 4)

    def send(self, frame: bytes) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(frame + b"\n")
        self._start_drain()

    def buffered(self) -> int:
        """Bytes written but not yet taken by the reader (0 when the transport cannot say)."""
        try:
            return self._writer.transport.get_write_buffer_size()
        except NotImplementedError:
            return 0

    def congested(self) -> bool:
        return not self._writer.is_closing() and self.buffered() >= self._high_water

    def when_ready(self, callback: Callable[[], None]) -> None:
        """Call `callback` (on the event loop) once the writer is not congested."""
        self._ready.append(callback)
        self._start_drain()

    def _start_drain(self) -> None:
        if self._drain is None or self._drain.done():
            self._drain = asyncio.ensure_future(self._drain_soon())

    async def _drain_soon(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._writer.drain()
        ready, self._ready = self._ready, []
        for callback in ready:
            callback()

    async def flush(self) -> None:
        if not self._writer.is_closing():
            await self._drain_soon()
