from __future__ import annotations

import json

import pytest

from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.framing import (
    Decoded,
    FrameDecoder,
    FrameError,
    TypedNotification,
    TypedResponse,
    parse_frame,
)
from sidecar.protocol import (
    Notification,
    Request,
    Response,
    RunEventParams,
    ThreadListResult,
    Token,
)


def _run_event_line(text: str, seq: int = 0) -> bytes:
    params = RunEventParams(run_id="r", thread_id="t", seq=seq, event=Token(text=text))
    frame = {"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump(mode="json")}
    return json.dumps(frame, ensure_ascii=False).encode() + b"\n"


def _tokens(decoded: list[Decoded]) -> list[str]:
    texts: list[str] = []
    for frame in decoded:
        assert isinstance(frame, TypedNotification)
        assert isinstance(frame.params, RunEventParams)
        assert isinstance(frame.params.event, Token)
        texts.append(frame.params.event.text)
    return texts


def test_the_decoder_joins_lines_split_at_every_byte_including_inside_a_character():
    stream = b"".join(_run_event_line(t, n) for n, t in enumerate(["héllo", "日本語", "🙂 ok"]))
    decoder = FrameDecoder()
    decoded: list[Decoded] = []
    for n in range(len(stream)):
        decoded += decoder.feed(stream[n : n + 1])
    assert _tokens(decoded) == ["héllo", "日本語", "🙂 ok"]


def test_the_decoder_takes_many_lines_in_one_chunk_and_skips_blank_ones():
    stream = b"\r\n\n".join(_run_event_line(str(n), n).rstrip(b"\n") for n in range(500))
    decoder = FrameDecoder()
    decoded = decoder.feed(stream + b"\n")
    assert _tokens(decoded) == [str(n) for n in range(500)]


def test_a_large_line_in_small_chunks_decodes_once_whole():
    text = "x" * 2_000_000
    line = _run_event_line(text)
    decoder = FrameDecoder()
    decoded: list[Decoded] = []
    for start in range(0, len(line), 4096):
        decoded += decoder.feed(line[start : start + 4096])
    assert _tokens(decoded) == [text]


def test_an_oversized_line_becomes_one_frame_error_and_the_next_line_decodes():
    decoder = FrameDecoder(max_line_bytes=200)
    first = decoder.feed(b"0123456789" * 15)
    second = decoder.feed(b"0123456789" * 15 + b"\n" + _run_event_line("after"))
    errors = [f for f in first + second if isinstance(f, FrameError)]
    assert len(errors) == 1
    assert _tokens([f for f in first + second if not isinstance(f, FrameError)]) == ["after"]


def test_reset_forgets_a_partial_line():
    decoder = FrameDecoder()
    decoder.feed(b'{"jsonrpc": "2.0", "met')
    decoder.reset()
    assert _tokens(decoder.feed(_run_event_line("fresh"))) == ["fresh"]


def test_a_malformed_line_is_a_frame_error_in_its_place():
    decoder = FrameDecoder()
    decoded = decoder.feed(_run_event_line("a") + b"not json\n" + _run_event_line("b", 1))
    assert isinstance(decoded[1], FrameError)
    assert _tokens([decoded[0], decoded[2]]) == ["a", "b"]


def test_an_expected_reply_is_validated_against_its_result_model():
    decoder = FrameDecoder()
    decoder.expect(1, "thread/list", ThreadListResult)
    decoder.expect(2, "thread/list", ThreadListResult)
    decoder.expect(3, "thread/list", ThreadListResult)
    decoded = decoder.feed(
        b'{"jsonrpc": "2.0", "id": 1, "result": {"threads": []}}\n'
        b'{"jsonrpc": "2.0", "id": 2, "result": {"threads": 5}}\n'
        b'{"jsonrpc": "2.0", "id": 3, "error": {"code": -32001, "message": "x"}}\n'
        b'{"jsonrpc": "2.0", "id": 4, "result": {}}\n'
    )
    ok, invalid, refused, unknown = decoded
    assert isinstance(ok, TypedResponse) and ok.result == ThreadListResult(threads=())
    assert isinstance(invalid, TypedResponse) and invalid.error is not None
    assert invalid.error.code == ClientErrorCode.INVALID_RESULT
    assert isinstance(refused, TypedResponse) and refused.error is not None
    assert refused.error.code == -32001
    assert isinstance(unknown, Response)


def test_a_forgotten_request_reply_stays_untyped():
    decoder = FrameDecoder()
    decoder.expect(9, "thread/list", ThreadListResult)
    decoder.forget(9)
    (reply,) = decoder.feed(b'{"jsonrpc": "2.0", "id": 9, "result": {"threads": []}}\n')
    assert isinstance(reply, Response)


def test_a_response_parses_with_its_error_object():
    frame = parse_frame(b'{"jsonrpc": "2.0", "id": 3, "error": {"code": -32001, "message": "x"}}')
    assert isinstance(frame, Response)
    assert frame.id == 3 and frame.error is not None and frame.error.code == -32001


def test_a_run_event_notification_parses_into_typed_params():
    params = RunEventParams(run_id="r", thread_id="t", seq=0, event=Token(text="hi"))
    line = json.dumps(
        {"jsonrpc": "2.0", "method": "run/event", "params": params.model_dump(mode="json")}
    )
    frame = parse_frame(line.encode())
    assert isinstance(frame, TypedNotification)
    assert frame.params == params


def test_unknown_notifications_and_requests_parse_untyped():
    assert isinstance(parse_frame(b'{"jsonrpc": "2.0", "method": "x/y"}'), Notification)
    assert isinstance(parse_frame(b'{"jsonrpc": "2.0", "id": 1, "method": "x/y"}'), Request)


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b"[1, 2]",
        b'{"jsonrpc": "2.0"}',
        b'{"jsonrpc": "1.0", "id": 1, "result": {}}',
        b'{"jsonrpc": "2.0", "method": "run/event", "params": {"run_id": "r"}}',
        b"\xff\xfe",
    ],
)
def test_malformed_lines_raise_frame_error(line: bytes):
    with pytest.raises(FrameError):
        parse_frame(line)
