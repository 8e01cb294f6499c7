"""The NDJSON line splitter: chunks in any size give the same lines, oversized lines are refused
in place, the last line needs no newline, and the work is linear in the input."""

from __future__ import annotations

import random

import pytest

from sidecar.protocol import LineSplitter, LineTooLongError

TOO_LONG = "<too long>"
STEPS = [1, 2, 3, 5, 7, 64, 4096, 1 << 20]


def _split(data: bytes, step: int, max_line_bytes: int = 1 << 20) -> list[bytes | str]:
    splitter = LineSplitter(max_line_bytes)
    out: list[bytes | LineTooLongError] = []
    for i in range(0, len(data), step):
        out += splitter.feed(data[i : i + step])
    out += splitter.finish()
    return [TOO_LONG if isinstance(item, LineTooLongError) else item for item in out]


def _expected(data: bytes, max_line_bytes: int) -> list[bytes | str]:
    out: list[bytes | str] = []
    for raw in data.split(b"\n"):
        line = raw.removesuffix(b"\r")
        if len(line) > max_line_bytes:
            out.append(TOO_LONG)
        elif line.strip():
            out.append(line)
    return out


@pytest.mark.parametrize("step", STEPS)
def test_lines_split_across_chunks_are_joined(step: int) -> None:
    data = b'{"id":1,"method":"ping"}\n{"a":"\xc3\xa9"}\n'
    assert _split(data, step) == [b'{"id":1,"method":"ping"}', b'{"a":"\xc3\xa9"}']


@pytest.mark.parametrize("step", [1, 3, 4096])
def test_crlf_line_ends_lose_their_carriage_return(step: int) -> None:
    assert _split(b"a\r\nb\r\nc\r", step) == [b"a", b"b", b"c"]


@pytest.mark.parametrize("step", [1, 3, 4096])
def test_blank_and_whitespace_lines_are_skipped(step: int) -> None:
    assert _split(b"\n\n  \n\t\r\na\n\n \nb\n\n", step) == [b"a", b"b"]


@pytest.mark.parametrize("step", [1, 3, 4096])
def test_a_final_line_without_newline_is_delivered_at_finish(step: int) -> None:
    assert _split(b"first\nlast", step) == [b"first", b"last"]


def test_feed_returns_only_complete_lines_and_holds_the_rest() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert splitter.pending == 4
    assert splitter.feed(b":2}\n") == [b'{"b":2}']
    assert splitter.pending == 0
    assert splitter.finish() == []


def test_finish_resets_the_splitter_for_reuse() -> None:
    splitter = LineSplitter()
    splitter.feed(b"partial")
    assert splitter.finish() == [b"partial"]
    assert splitter.feed(b"next\n") == [b"next"]


def test_empty_input_gives_nothing() -> None:
    assert _split(b"", 1) == []


@pytest.mark.parametrize("step", STEPS)
def test_an_oversized_line_becomes_one_error_in_its_place_and_splitting_goes_on(
    step: int,
) -> None:
    data = b"ok1\n" + b"x" * 100 + b"\nok2\n" + b"y" * 11 + b"\n" + b"z" * 10 + b"\nend"
    result = _split(data, step, max_line_bytes=10)
    assert result == [b"ok1", TOO_LONG, b"ok2", TOO_LONG, b"z" * 10, b"end"]
    assert result == _expected(data, 10)


def test_an_oversized_final_line_without_newline_is_refused_once() -> None:
    assert _split(b"ok\n" + b"x" * 50, 3, max_line_bytes=10) == [b"ok", TOO_LONG]


def test_the_error_names_the_limit_and_memory_stays_bounded() -> None:
    splitter = LineSplitter(max_line_bytes=1000)
    errors: list[LineTooLongError] = []
    for _ in range(100):
        for item in splitter.feed(b"x" * 512):
            assert isinstance(item, LineTooLongError)
            errors.append(item)
        assert splitter.pending <= 1000
    assert len(errors) == 1
    assert errors[0].max_line_bytes == 1000
    assert errors[0].size > 1000
    assert splitter.feed(b"tail\nnext\n") == [b"next"]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        LineSplitter(0)


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_random_streams_match_a_plain_split(step: int) -> None:
    rng = random.Random(step)
    alphabet = [b"a", b"\n", b" ", b"\r", b"\xc3\xa9", b"{", b"}"]
    data = b"".join(rng.choice(alphabet) for _ in range(5000))
    assert _split(data, step, max_line_bytes=12) == _expected(data, 12)


def test_a_16_mb_line_in_4_kb_chunks_arrives_intact() -> None:
    """Volume: 4,096 chunks of one line (a quadratic splitter would copy ~32 GB here)."""
    big = bytes(range(11, 256)) * (16 * 1024 * 1024 // 245)
    data = big + b"\n" + b"tail\n"
    splitter = LineSplitter()
    out: list[bytes | LineTooLongError] = []
    for i in range(0, len(data), 4096):
        out += splitter.feed(data[i : i + 4096])
        assert splitter.pending <= len(big)
    assert out == [big, b"tail"]
