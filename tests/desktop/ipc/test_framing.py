from __future__ import annotations

import json

import pytest

from desktop.ipc.framing import FrameError, LineBuffer, TypedNotification, parse_frame
from sidecar.protocol import Notification, Request, Response, RunEventParams, Token


def test_line_buffer_joins_partial_lines_across_chunks():
    buffer = LineBuffer()
    assert buffer.feed(b'{"a":') == []
    assert buffer.feed(b' 1}\n{"b"') == [b'{"a": 1}']
    assert buffer.feed(b": 2}\r\n\n") == [b'{"b": 2}']


def test_line_buffer_clear_forgets_a_partial_line():
    buffer = LineBuffer()
    buffer.feed(b"half a li")
    buffer.clear()
    assert buffer.feed(b"ne\n") == [b"ne"]


def test_line_buffer_drops_an_overlong_line_and_keeps_the_next():
    buffer = LineBuffer(max_line_bytes=8)
    assert buffer.feed(b"0123456789") == []
    assert buffer.feed(b"abc\nok\n") == [b"ok"]


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
