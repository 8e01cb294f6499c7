"""Every spec error code, and the server serving on after each one."""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest

from sidecar.protocol import ErrorCode, InitializeResult
from tests.sidecar.rpc.conftest import PeerFactory
from tests.sidecar.rpc.peer import Peer, error_code

pytestmark = pytest.mark.anyio

NULL_ID_ERROR = {"jsonrpc": "2.0", "id": None}


def _assert_error(reply: dict[str, Any], code: ErrorCode, request_id: object) -> None:
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == request_id
    assert error_code(reply) == code
    assert isinstance(reply["error"]["message"], str)


@pytest.mark.parametrize(
    "raw",
    [b'{"jsonrpc":"2.0","id":1,"method":"ping"', b"{bad}", b"nul", b'{"a":1}}', b"\x00"],
    ids=["truncated", "unquoted", "partial-literal", "trailing-data", "nul-byte"],
)
async def test_bad_json_gets_a_parse_error_with_a_null_id(peer: Peer, raw: bytes) -> None:
    peer.send_raw(raw + b"\n")
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    await peer.assert_alive()


async def test_invalid_utf8_gets_a_parse_error(peer: Peer) -> None:
    peer.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}\n')
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    await peer.assert_alive()


async def test_json_nested_too_deeply_to_parse_gets_a_parse_error(peer: Peer) -> None:
    peer.send_raw(b"[" * 100_000 + b"\n")
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    peer.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 50_000 + b"\n")
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    await peer.assert_alive()


@pytest.mark.parametrize("raw", [b"5", b'"ping"', b"null", b"true", b"1.5"])
async def test_a_frame_that_is_not_an_object_is_an_invalid_request(peer: Peer, raw: bytes) -> None:
    peer.send_raw(raw + b"\n")
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, None)
    await peer.assert_alive()


@pytest.mark.parametrize(
    "frame",
    [
        {"id": 7, "method": "ping"},
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"jsonrpc": 2.0, "id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7},
        {"jsonrpc": "2.0", "id": 7, "method": 5},
        {"jsonrpc": "2.0", "id": 7, "method": None},
        {"jsonrpc": "2.0", "id": 7, "method": ["ping"]},
    ],
    ids=[
        "missing-jsonrpc",
        "wrong-version",
        "numeric-version",
        "missing-method",
        "int-method",
        "null-method",
        "list-method",
    ],
)
async def test_a_malformed_envelope_is_an_invalid_request_echoing_its_id(
    peer: Peer, frame: dict[str, Any]
) -> None:
    peer.send(frame)
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, 7)
    await peer.assert_alive()


@pytest.mark.parametrize(
    "bad_id",
    [True, False, {"n": 1}, [1], [], {}],
    ids=lambda v: type(v).__name__ + repr(v),
)
async def test_an_id_of_the_wrong_type_is_an_invalid_request_with_a_null_id(
    peer: Peer, bad_id: object
) -> None:
    peer.send({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, None)
    await peer.assert_alive()


@pytest.mark.parametrize("literal", ["1.5", "2.0", "1e3", "-0.0", "0.1", "-7", "1E-2"])
async def test_a_number_id_with_a_fraction_or_exponent_is_answered_with_that_number(
    peer: Peer, literal: str
) -> None:
    peer.send_raw(f'{{"jsonrpc":"2.0","id":{literal},"method":"ping"}}\n'.encode())
    reply = await peer.receive()
    assert reply == {"jsonrpc": "2.0", "id": float(literal), "result": {}}
    assert math.copysign(1, reply["id"]) == math.copysign(1, float(literal))  # -0.0 stays -0.0
    peer.send_raw(f'{{"jsonrpc":"2.0","id":{literal},"method":"ping","params":5}}\n'.encode())
    _assert_error(await peer.receive(), ErrorCode.INVALID_PARAMS, float(literal))
    await peer.assert_alive()


async def test_a_malformed_request_with_a_number_id_echoes_it(peer: Peer) -> None:
    peer.send_raw(b'{"jsonrpc":"1.0","id":2.0,"method":"ping"}\n')
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, 2.0)
    await peer.assert_alive()


async def test_a_null_id_is_a_request_answered_with_a_null_id(peer: Peer) -> None:
    peer.send({"jsonrpc": "2.0", "id": None, "method": "test/echo", "params": {"text": "hi"}})
    assert await peer.receive() == {"jsonrpc": "2.0", "id": None, "result": {"text": "hi"}}
    await peer.assert_alive()


async def test_a_number_id_too_large_for_a_double_is_an_invalid_request(peer: Peer) -> None:
    peer.send_raw(b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}\n')
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, None)
    await peer.assert_alive()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_non_json_number_literals_are_a_parse_error(peer: Peer, literal: str) -> None:
    peer.send_raw(f'{{"jsonrpc":"2.0","id":{literal},"method":"ping"}}\n'.encode())
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    await peer.assert_alive()


@pytest.mark.parametrize(
    ("method", "params", "where"),
    [
        ("thread/get", r'{"thread_id":"\ud800"}', ["thread_id"]),
        ("thread/get", r'{"thread_id":"a\udfffb"}', ["thread_id"]),
        ("thread/create", r'{"title":"\ud83d"}', ["title"]),
        ("test/echo", r'{"text":"ok","\udc00":1}', ["\udc00"]),
        ("test/echo", r'{"text":["fine",{"deep":"x\ud800"}]}', ["text", 1, "deep"]),
    ],
    ids=["lone-high", "lone-low-inside", "half-a-pair", "in-a-key", "nested"],
)
async def test_a_lone_surrogate_in_a_string_is_invalid_params_saying_where(
    make_peer: PeerFactory, method: str, params: str, where: list[object]
) -> None:
    peer = make_peer(real=("thread/get", "thread/create"))
    peer.send_raw(f'{{"jsonrpc":"2.0","id":"s","method":"{method}","params":{params}}}\n'.encode())
    reply = await peer.receive()
    _assert_error(reply, ErrorCode.INVALID_PARAMS, "s")
    [detail] = reply["error"]["data"]
    assert (detail["type"], detail["loc"]) == ("string_unicode", where)
    await peer.assert_alive()


async def test_a_surrogate_pair_is_one_character_and_valid(make_peer: PeerFactory) -> None:
    peer = make_peer(real=("thread/create",))
    peer.send_raw(
        b'{"jsonrpc":"2.0","id":"p","method":"thread/create","params":{"title":"\\ud83d\\ude00"}}\n'
    )
    reply = await peer.receive()
    assert reply["result"]["title"] == "\U0001f600"


async def test_a_surrogate_as_raw_bytes_is_a_parse_error(peer: Peer) -> None:
    # UTF-8 has no encoding of a surrogate: these bytes are not UTF-8 text.
    peer.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"test/echo","params":{"text":"\xed\xa0\x80"}}\n'
    )
    _assert_error(await peer.receive(), ErrorCode.PARSE_ERROR, None)
    await peer.assert_alive()


async def test_a_lone_surrogate_in_a_request_id_is_echoed(peer: Peer) -> None:
    peer.send_raw(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}\n')
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "\ud800", "result": {}}


async def test_an_empty_batch_is_one_invalid_request(peer: Peer) -> None:
    peer.send_raw(b"[]\n")
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, None)
    await peer.assert_alive()


async def test_an_oversized_frame_is_an_invalid_request_and_the_next_frame_is_served(
    make_peer: PeerFactory,
) -> None:
    peer = make_peer(max_bytes=256)
    peer.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"test/echo","params":{"text":"')
    peer.send_raw(b"x" * 1000)
    peer.send_raw(b'"}}\n')
    _assert_error(await peer.receive(), ErrorCode.INVALID_REQUEST, None)
    await peer.assert_alive()


async def test_an_unknown_method_is_method_not_found(peer: Peer) -> None:
    reply = await peer.call("thread/explode", {"x": 1}, request_id="req-9")
    _assert_error(reply, ErrorCode.METHOD_NOT_FOUND, "req-9")
    await peer.assert_alive()


async def test_an_unknown_notification_is_ignored_silently(peer: Peer) -> None:
    peer.send(peer.notification_frame("thread/explode", {"x": 1}))
    peer.send(peer.notification_frame("$/somethingElse"))
    await peer.assert_alive()


async def test_a_notification_to_a_known_method_gets_no_reply(peer: Peer) -> None:
    peer.send(peer.notification_frame("ping"), peer.notification_frame("test/echo", {"text": 1}))
    await peer.assert_alive()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"text": 5}, [("string_type", ["text"])]),
        ({"text": "a", "times": "many"}, [("int_parsing", ["times"])]),
        ({"text": "a", "colour": "red"}, [("extra_forbidden", ["colour"])]),
        ({}, [("missing", ["text"])]),
    ],
    ids=["wrong-type", "unparsable-int", "extra-field", "missing-field"],
)
async def test_params_that_do_not_validate_are_invalid_params_with_details(
    peer: Peer, params: dict[str, Any], expected: list[tuple[str, list[str]]]
) -> None:
    reply = await peer.call("test/echo", params)
    _assert_error(reply, ErrorCode.INVALID_PARAMS, reply["id"])
    assert [(d["type"], d["loc"]) for d in reply["error"]["data"]] == expected
    await peer.assert_alive()


async def test_invalid_params_say_which_field_and_what_is_wrong_in_one_line(peer: Peer) -> None:
    reply = await peer.call("test/echo", {"text": "ok", "colour": "red"})
    _assert_error(reply, ErrorCode.INVALID_PARAMS, reply["id"])
    assert reply["error"]["message"] == "invalid params: colour: extra inputs are not permitted"
    await peer.assert_alive()


@pytest.mark.parametrize("params", [["a"], "a", 5, True], ids=repr)
async def test_params_that_are_not_an_object_are_invalid_params(peer: Peer, params: object) -> None:
    reply = await peer.call("test/echo", params)
    _assert_error(reply, ErrorCode.INVALID_PARAMS, reply["id"])
    await peer.assert_alive()


async def test_the_real_ping_rejects_extra_params(peer: Peer) -> None:
    reply = await peer.call("ping", {"unexpected": True})
    _assert_error(reply, ErrorCode.INVALID_PARAMS, reply["id"])


async def test_omitted_or_null_params_count_as_empty(peer: Peer) -> None:
    assert (await peer.call("ping"))["result"] == {}
    peer.send({"jsonrpc": "2.0", "id": "n", "method": "ping", "params": None})
    assert await peer.receive() == {"jsonrpc": "2.0", "id": "n", "result": {}}


async def test_an_application_error_passes_through_with_its_code_and_data(peer: Peer) -> None:
    reply = await peer.call("test/fail", {"text": "thread is busy"})
    _assert_error(reply, ErrorCode.THREAD_BUSY, reply["id"])
    assert reply["error"]["message"] == "thread is busy"
    assert reply["error"]["data"] == {"thread_id": "t-1", "n": [1, 2]}
    await peer.assert_alive()


async def test_the_real_initialize_refuses_another_major_protocol_version(peer: Peer) -> None:
    reply = await peer.call("initialize", {"client_name": "t", "protocol_version": "2.0"})
    _assert_error(reply, ErrorCode.INVALID_PARAMS, reply["id"])


async def test_the_real_initialize_answers_with_a_typed_result(peer: Peer) -> None:
    reply = await peer.call("initialize", {"client_name": "t", "protocol_version": "1.7"})
    result = InitializeResult.model_validate(reply["result"])
    assert result.server_version == "9.9.9"
    assert result.model_configured is False


async def test_an_unexpected_exception_is_an_internal_error_and_is_logged(
    peer: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="sidecar.rpc.server"):
        reply = await peer.call("test/crash", {"text": "boom"})
    _assert_error(reply, ErrorCode.INTERNAL_ERROR, reply["id"])
    assert "data" not in reply["error"]
    logged = [r for r in caplog.records if r.name == "sidecar.rpc.server"]
    assert [r.levelno for r in logged] == [logging.ERROR]
    assert logged[0].exc_info is not None
    assert isinstance(logged[0].exc_info[1], RuntimeError)
    await peer.assert_alive()


async def test_a_result_that_cannot_be_serialised_is_an_internal_error(
    peer: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="sidecar.rpc.server"):
        reply = await peer.call("test/bad_result", {"text": "x"})
    _assert_error(reply, ErrorCode.INTERNAL_ERROR, reply["id"])
    await peer.assert_alive()


async def test_a_stream_of_malformed_frames_never_stops_the_server(
    make_peer: PeerFactory,
) -> None:
    peer = make_peer(max_bytes=8192)
    garbage = [
        b"{",
        b"\xff\xfe\xfd",
        b"[" * 5000,
        b"42",
        b"[]",
        b"[1,2]",
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":"nope"}',
        b'{"jsonrpc":"2.0","id":2,"method":"test/echo","params":[1]}',
        b'{"jsonrpc":"2.0","id":3,"method":"test/crash","params":{"text":"x"}}',
        b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":{"a":[]}}}',
        b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":[1]}',
        b'{"jsonrpc":"2.0","method":"$/cancelRequest"}',
        b"x" * 10_000,
    ]
    peer.send_raw(b"\n".join(garbage) + b"\n")
    replies = [await peer.receive() for _ in range(11)]
    codes = sorted(
        error_code(item)
        for reply in replies
        for item in (reply if isinstance(reply, list) else [reply])
    )
    assert codes == sorted(
        [
            ErrorCode.PARSE_ERROR,
            ErrorCode.PARSE_ERROR,
            ErrorCode.PARSE_ERROR,
            ErrorCode.INVALID_REQUEST,  # 42
            ErrorCode.INVALID_REQUEST,  # []
            ErrorCode.INVALID_REQUEST,  # [1,2] -> two
            ErrorCode.INVALID_REQUEST,
            ErrorCode.INVALID_REQUEST,  # id true
            ErrorCode.METHOD_NOT_FOUND,
            ErrorCode.INVALID_PARAMS,
            ErrorCode.INTERNAL_ERROR,
            ErrorCode.INVALID_REQUEST,  # oversized
        ]
    )
    await peer.assert_alive()


async def test_requests_before_initialize_get_not_initialized_and_after_it_run(
    make_peer: PeerFactory,
) -> None:
    peer = make_peer(gated=True)
    early = await peer.call("test/echo", {"text": "x"})
    _assert_error(early, ErrorCode.NOT_INITIALIZED, early["id"])
    assert (await peer.call("ping"))["result"] == {}
    refused = await peer.call("initialize", {"client_name": "t", "protocol_version": "2.0"})
    _assert_error(refused, ErrorCode.INVALID_PARAMS, refused["id"])
    still = await peer.call("test/echo", {"text": "x"})
    _assert_error(still, ErrorCode.NOT_INITIALIZED, still["id"])
    await peer.call("initialize", {"client_name": "t"})
    assert (await peer.call("test/echo", {"text": "x"}))["result"] == {"text": "x"}


async def test_an_unknown_method_before_initialize_is_still_method_not_found(
    make_peer: PeerFactory,
) -> None:
    peer = make_peer(gated=True)
    reply = await peer.call("no/such")
    _assert_error(reply, ErrorCode.METHOD_NOT_FOUND, reply["id"])
