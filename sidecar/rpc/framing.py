"""Line framing on byte streams, linear in the size of the input.

The reader scans each byte once: it keeps a buffer and the offset already searched, so a
multi-megabyte frame arriving in small chunks costs O(n), not O(n²).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

MAX_FRAME_BYTES = 64 * 1024 * 1024
CHUNK = 256 * 1024


class FrameTooLargeError(ValueError):
    """A line exceeded MAX_FRAME_BYTES; it was discarded up to its newline."""


async def read_frames(
    reader: asyncio.StreamReader, *, max_bytes: int = MAX_FRAME_BYTES
) -> AsyncIterator[bytes | FrameTooLargeError]:
    """Yield each non-blank line (without its newline) until EOF; an oversized line yields a
    `FrameTooLargeError` in its place and reading goes on with the next line."""
    buffer = bytearray()
    scanned = 0  # bytes of `buffer` already searched for a newline
    skipping = False  # inside an oversized line: drop bytes up to its newline
    while True:
        chunk = await reader.read(CHUNK)
        if not chunk:
            if buffer.strip() and not skipping:
                yield bytes(buffer)
            return
        buffer += chunk
        start = 0
        while (newline := buffer.find(b"\n", max(scanned, start))) >= 0:
            line = bytes(buffer[start:newline])
            start = newline + 1
            if skipping:
                skipping = False
            elif len(line) > max_bytes:
                yield FrameTooLargeError(f"frame larger than {max_bytes} bytes")
            elif line.strip():
                yield line
        del buffer[:start]
        scanned = len(buffer)
        if scanned > max_bytes:
            if not skipping:
                yield FrameTooLargeError(f"frame larger than {max_bytes} bytes")
            skipping = True
            buffer.clear()
            scanned = 0


class FrameWriter:
    """Writes one frame per line. `send` never blocks the caller; a drain task applies
    back-pressure in the background."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._drain: asyncio.Task[None] | None = None

    def send(self, frame: bytes) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(frame + b"\n")
        if self._drain is None or self._drain.done():
            self._drain = asyncio.ensure_future(self._drain_soon())

    async def _drain_soon(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._writer.drain()

    async def flush(self) -> None:
        if not self._writer.is_closing():
            await self._drain_soon()
