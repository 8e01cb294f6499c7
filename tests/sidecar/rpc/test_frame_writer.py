"""Back-pressure on the stdio writer: a reader that stops reading makes the writer congested,
streamed text then waits in the run's emitter (growing by its own size, not by a frame per token)
and leaves whole, in order, once the reader is back."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from sidecar.protocol import LineSplitter, RunEventParams
from sidecar.rpc.framing import FrameWriter
from sidecar.runtime.emitter import GatedEventSink, RunEmitter
from sidecar.store import Store, open_database

pytestmark = pytest.mark.anyio

HIGH_WATER = 64 * 1024


@dataclass
class Pipe:
    frames: FrameWriter
    read_fd: int
    transport: asyncio.WriteTransport


@pytest.fixture
async def pipe() -> AsyncIterator[Pipe]:
    """A FrameWriter on a real OS pipe whose reading end nobody reads until the test does."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    out = os.fdopen(write_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    yield Pipe(FrameWriter(writer, high_water=HIGH_WATER), read_fd, transport)
    transport.close()
    os.close(read_fd)


async def _read_lines(
    read_fd: int, count: int, splitter: LineSplitter | None = None
) -> list[bytes]:
    """Read the pipe (as the window would) until `count` more lines arrived."""
    splitter = splitter or LineSplitter()
    lines: list[bytes] = []
    with anyio.fail_after(20):
        while len(lines) < count:
            try:
                data = os.read(read_fd, 1 << 16)
            except BlockingIOError:
                await asyncio.sleep(0.001)
                continue
            lines += [line for line in splitter.feed(data) if isinstance(line, bytes)]
    return lines


async def test_a_stopped_reader_makes_the_writer_congested_and_draining_calls_back(
    pipe: Pipe,
) -> None:
    sent = 0
    while not pipe.frames.congested():
        pipe.frames.send(json.dumps({"n": sent, "pad": "x" * 1000}).encode())
        sent += 1
        assert sent < 10_000
    assert pipe.frames.buffered() >= HIGH_WATER
    ready = asyncio.Event()
    pipe.frames.when_ready(ready.set)
    lines = await _read_lines(pipe.read_fd, sent)
    with anyio.fail_after(10):
        await ready.wait()
    assert not pipe.frames.congested()
    assert [json.loads(line)["n"] for line in lines] == list(range(sent))


async def test_tokens_wait_in_the_emitter_while_the_reader_is_away(
    pipe: Pipe, tmp_path: Path
) -> None:
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "start")

    def to_wire(params: RunEventParams) -> None:
        frame = {"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump()}
        pipe.frames.send(json.dumps(frame).encode())

    emit = RunEmitter(store, GatedEventSink(to_wire, pipe.frames), "r1", thread.id, window_s=0.001)
    tokens = [f"token {n} with some text; " for n in range(50_000)]  # ~1.3 MB of text
    for n, text in enumerate(tokens):
        emit.token(text)
        if n % 100 == 0:
            await asyncio.sleep(0)  # windows close, the writer drains what the pipe takes
        assert pipe.frames.buffered() < HIGH_WATER + 64 * 1024  # bounded: about one event more
    emit.flush()
    splitter = LineSplitter()
    received: list[str] = []
    while len("".join(received)) < len("".join(tokens)):
        lines = await _read_lines(pipe.read_fd, 1, splitter)
        received += [json.loads(line)["params"]["event"]["text"] for line in lines]
    assert "".join(received) == "".join(tokens)
    db.close()
