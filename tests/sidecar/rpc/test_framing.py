"""Line framing: how lines are cut from a byte stream, and how frames are written."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from sidecar.rpc.framing import MAX_FRAME_BYTES, FrameTooLargeError, read_frames
from tests.sidecar.rpc.streams import Capture, SmallReads

pytestmark = pytest.mark.anyio

TOO_LARGE = "<too large>"
STEPS = [1, 2, 3, 5, 7, 64, 4096, 1 << 20]


async def _frames(
    data: bytes, *, step: int = 1 << 20, max_bytes: int = MAX_FRAME_BYTES
) -> list[bytes | str]:
    """Every frame `read_frames` yields for `data` read `step` bytes at a time; an oversized
    frame shows as TOO_LARGE."""
    reader = SmallReads(step)
    reader.feed_data(data)
    reader.feed_eof()
    with anyio.fail_after(30):
        return [
            TOO_LARGE if isinstance(f, FrameTooLargeError) else f
            async for f in read_frames(reader, max_bytes=max_bytes)
        ]


def _expected(data: bytes, max_bytes: int) -> list[bytes | str]:
    """The frames a line reader must produce: non-blank lines, oversized ones flagged."""
    lines = data.split(b"\n")
    out: list[bytes | str] = []
    for line in lines:
        if len(line) > max_bytes:
            out.append(TOO_LARGE)
        elif line.strip():
            out.append(line)
    return out


@pytest.mark.parametrize("step", STEPS)
async def test_lines_split_across_chunks_are_joined(step: int) -> None:
    data = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"a":"\xc3\xa9"}\n'
    assert await _frames(data, step=step) == [
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        b'{"a":"\xc3\xa9"}',
    ]


async def test_many_lines_in_one_chunk_each_become_a_frame() -> None:
    lines = [f'{{"n":{i}}}'.encode() for i in range(1000)]
    assert await _frames(b"\n".join(lines) + b"\n") == lines


@pytest.mark.parametrize("step", [1, 3, 4096])
async def test_blank_and_whitespace_lines_are_skipped(step: int) -> None:
    data = b"\n\n  \n\t\r\na\n\n \nb\n\n"
    assert await _frames(data, step=step) == [b"a", b"b"]


@pytest.mark.parametrize("step", [1, 3, 4096])
async def test_a_final_line_without_newline_is_delivered_at_eof(step: int) -> None:
    assert await _frames(b"first\nlast", step=step) == [b"first", b"last"]


async def test_a_final_blank_remainder_is_not_a_frame() -> None:
    assert await _frames(b"only\n   ") == [b"only"]


async def test_empty_input_yields_nothing() -> None:
    assert await _frames(b"") == []


async def test_a_16_mb_line_arrives_intact() -> None:
    big = bytes(range(11, 256)) * (16 * 1024 * 1024 // 245 + 1)
    assert b"\n" not in big
    assert await _frames(big + b"\n" + b"after\n") == [big, b"after"]


async def test_a_16_mb_line_read_in_4_kb_chunks_arrives_intact() -> None:
    # Quadratic rescanning of the buffer would make this slow; the bound below is only a
    # backstop, correctness is the assertion.
    big = b"0123456789abcdef" * (1 << 20)
    reader = SmallReads(4096)
    reader.feed_data(b"before\n" + big + b"\nafter")
    reader.feed_eof()
    with anyio.fail_after(30):
        frames = [f async for f in read_frames(reader)]
    assert reader.reads >= len(big) // 4096
    assert len(frames) == 3
    assert frames[0] == b"before"
    assert frames[1] == big
    assert frames[2] == b"after"


@pytest.mark.parametrize("step", STEPS)
async def test_an_oversized_line_yields_an_error_and_the_next_line_is_still_delivered(
    step: int,
) -> None:
    data = b"x" * 50 + b"\n" + b'{"next":1}\n'
    assert await _frames(data, step=step, max_bytes=16) == [TOO_LARGE, b'{"next":1}']


@pytest.mark.parametrize("step", STEPS)
async def test_a_line_of_exactly_max_bytes_is_delivered(step: int) -> None:
    data = b"a" * 16 + b"\n" + b"b" * 17 + b"\n" + b"c" * 16
    assert await _frames(data, step=step, max_bytes=16) == [b"a" * 16, TOO_LARGE, b"c" * 16]


@pytest.mark.parametrize("step", STEPS)
async def test_an_oversized_last_line_without_newline_yields_one_error(step: int) -> None:
    assert await _frames(b"ok\n" + b"z" * 100, step=step, max_bytes=16) == [b"ok", TOO_LARGE]


@pytest.mark.parametrize("step", STEPS)
async def test_consecutive_oversized_lines_each_yield_one_error(step: int) -> None:
    data = b"y" * 40 + b"\n" + b"z" * 1000 + b"\n" + b"ok"
    assert await _frames(data, step=step, max_bytes=16) == [TOO_LARGE, TOO_LARGE, b"ok"]


PAYLOADS = [
    b"short\n" + b"L" * 40 + b"\nmid-size-line\n\n" + b"M" * 17 + b"\nend",
    b"\n".join([b"k" * n for n in range(0, 40, 3)]),
    b"A" * 16 + b"\n" + b"B" * 33 + b"\n\n" + b"C" * 15 + b"\n" + b"D" * 100,
]


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("step", STEPS)
async def test_frames_do_not_depend_on_how_the_stream_is_chunked(payload: bytes, step: int) -> None:
    assert await _frames(payload, step=step, max_bytes=16) == _expected(payload, 16)


async def test_frames_are_yielded_as_soon_as_their_newline_arrives() -> None:
    reader = asyncio.StreamReader()
    frames = read_frames(reader)
    reader.feed_data(b"one\ntw")
    with anyio.fail_after(5):
        assert await anext(frames) == b"one"
        reader.feed_data(b"o\n")
        assert await anext(frames) == b"two"
        reader.feed_eof()
        assert [f async for f in frames] == []


async def test_frame_writer_writes_one_line_per_frame_in_order(capture: Capture) -> None:
    writer, transport = capture.writer, capture.transport
    writer.send(b'{"a":1}')
    writer.send(b'{"b":2}')
    with anyio.fail_after(5):
        await writer.flush()
        assert await transport.frames.get() == {"a": 1}
        assert await transport.frames.get() == {"b": 2}
    assert bytes(transport.written) == b'{"a":1}\n{"b":2}\n'


async def test_frame_writer_send_does_not_wait_for_a_slow_reader(capture: Capture) -> None:
    writer, transport, protocol = capture.writer, capture.transport, capture.protocol
    protocol.pause_writing()  # the peer stopped reading: drain would block
    writer.send(b"{}")  # returns at once
    assert bytes(transport.written) == b"{}\n"
    flushing = asyncio.ensure_future(writer.flush())
    await asyncio.wait({flushing}, timeout=0)
    assert not flushing.done()
    protocol.resume_writing()
    with anyio.fail_after(5):
        await flushing


async def test_frame_writer_drops_frames_after_the_transport_closes(capture: Capture) -> None:
    writer, transport = capture.writer, capture.transport
    transport.close()
    writer.send(b"{}")
    with anyio.fail_after(5):
        await writer.flush()
    assert bytes(transport.written) == b""
