"""The parts of StdioTransport that need no process: the line splitter (linear work, lines
intact across any chunking) and construction."""

from __future__ import annotations

import json
import sys

import mcp_types
from mcp import StdioServerParameters

from sidecar.host.stdio import StderrLineSplitter, StdioTransport

CHUNK = 64 * 1024


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_an_8_mb_line_in_64_kb_chunks_is_scanned_and_copied_a_constant_number_of_times() -> None:
    line = b"x" * (8 << 20)
    data = line + b"\n"
    splitter = StderrLineSplitter()
    lines = [out for chunk in _chunks(data, CHUNK) for out in splitter.feed(chunk)]
    assert lines == [line]
    assert splitter.scanned == len(data)  # every byte looked at once, never re-scanned
    assert splitter.copied < 3 * len(data)


def test_work_grows_linearly_with_the_line_length() -> None:
    work: list[int] = []
    for megabytes in (1, 4, 8):
        splitter = StderrLineSplitter()
        for chunk in _chunks(b"y" * (megabytes << 20) + b"\n", CHUNK):
            splitter.feed(chunk)
        work.append(splitter.scanned + splitter.copied)
    assert work[2] / work[0] < 8.1  # quadratic work would be ~64x
    assert work[1] / work[0] < 4.1


def test_many_lines_in_one_chunk_come_out_in_order() -> None:
    splitter = StderrLineSplitter()
    assert splitter.feed(b"a\nbb\n\nccc\nd") == [b"a", b"bb", b"", b"ccc"]
    assert splitter.feed(b"d\n") == [b"dd"]
    assert splitter.flush() == b""


def test_a_line_split_inside_a_multibyte_character_parses_whole() -> None:
    text = "é€😀" * 30_000
    data = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "result": {"text": text}}, ensure_ascii=False
    ).encode()
    assert data.count(b"\n") == 0
    splitter = StderrLineSplitter()
    # 7-byte chunks cut through 2-, 3- and 4-byte sequences alike.
    lines = [out for chunk in _chunks(data + b"\n", 7) for out in splitter.feed(chunk)]
    assert len(lines) == 1
    message = mcp_types.jsonrpc_message_adapter.validate_json(lines[0], by_name=False)
    assert isinstance(message, mcp_types.JSONRPCResponse)
    assert message.result["text"] == text


def test_the_rest_after_the_last_newline_is_kept_until_flushed() -> None:
    splitter = StderrLineSplitter()
    assert splitter.feed(b"one\ntw") == [b"one"]
    assert splitter.feed(b"o") == []
    assert splitter.flush() == b"two"
    assert splitter.flush() == b""


def test_a_line_limit_cuts_a_runaway_line_into_pieces() -> None:
    splitter = StderrLineSplitter(max_line=10)
    assert splitter.feed(b"abcdef") == []
    assert splitter.feed(b"ghijkl") == [b"abcdefghijkl"]
    assert splitter.feed(b"mn\n") == [b"mn"]


def test_a_transport_can_be_built_outside_the_event_loop_and_has_no_process_yet() -> None:
    transport = StdioTransport(StdioServerParameters(command=sys.executable))
    assert transport.pid is None
    assert transport.returncode is None
    assert transport.stderr_tail == []
