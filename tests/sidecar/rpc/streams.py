"""In-process stream ends for the framing and server tests: a reader that hands out small
chunks, and a write transport that captures what the sidecar sends, line by line."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from sidecar.rpc.framing import FrameWriter


class SmallReads(asyncio.StreamReader):
    """A StreamReader whose `read(n)` returns at most `step` bytes, like a pipe that delivers a
    large write in pieces. Feed it with `feed_data` / `feed_eof` as usual."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step
        self.reads = 0

    async def read(self, n: int = -1) -> bytes:
        self.reads += 1
        return await super().read(self.step if n < 0 else min(n, self.step))


class CaptureTransport(asyncio.WriteTransport):
    """Collects written bytes; every complete line is decoded as JSON and queued."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.frames: asyncio.Queue[Any] = asyncio.Queue()
        self._pending = bytearray()
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += data
        self._pending += data
        while (newline := self._pending.find(b"\n")) >= 0:
            line = bytes(self._pending[:newline])
            del self._pending[: newline + 1]
            self.frames.put_nowait(json.loads(line))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def get_write_buffer_size(self) -> int:
        return 0


@dataclass
class Capture:
    """A FrameWriter over a capturing transport. Close the transport when done: an unclosed
    StreamWriter warns when collected."""

    writer: FrameWriter
    transport: CaptureTransport
    protocol: asyncio.StreamReaderProtocol


def capture_writer() -> Capture:
    """Build a Capture (call inside a running loop)."""
    transport = CaptureTransport()
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    stream = asyncio.StreamWriter(transport, protocol, None, asyncio.get_running_loop())
    return Capture(FrameWriter(stream), transport, protocol)
