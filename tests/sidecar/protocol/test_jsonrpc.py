"""The JSON-RPC envelopes, error codes and RpcError."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sidecar.protocol import (
    CANCEL_REQUEST,
    CancelParams,
    ErrorCode,
    ErrorObject,
    Notification,
    Request,
    Response,
    RpcError,
)


def test_spec_error_codes_have_the_spec_values() -> None:
    assert ErrorCode.PARSE_ERROR == -32700
    assert ErrorCode.INVALID_REQUEST == -32600
    assert ErrorCode.METHOD_NOT_FOUND == -32601
    assert ErrorCode.INVALID_PARAMS == -32602
    assert ErrorCode.INTERNAL_ERROR == -32603
    assert ErrorCode.REQUEST_CANCELLED == -32800


def test_application_error_codes_sit_in_the_server_range_and_are_distinct() -> None:
    spec = {-32700, -32600, -32601, -32602, -32603, -32800}
    app = [c for c in ErrorCode if c.value not in spec]
    assert app
    assert all(-32099 <= c.value <= -32000 for c in app)
    assert len({c.value for c in ErrorCode}) == len(list(ErrorCode))


def test_rpc_error_becomes_an_error_object_with_its_code_and_data() -> None:
    error = RpcError(ErrorCode.THREAD_BUSY, "busy", {"thread_id": "t-1"})
    obj = error.to_error()
    assert obj == ErrorObject(code=-32002, message="busy", data={"thread_id": "t-1"})
    assert type(error.code) is int
    assert RpcError(-32050, "custom").to_error().code == -32050


@pytest.mark.parametrize(
    "frame",
    [
        Request(id=1, method="ping"),
        Request(id="abc", method="thread/get", params={"thread_id": "t"}),
        Notification(method=CANCEL_REQUEST, params={"id": 1}),
        Response(id=1, result={"threads": []}),
        Response(id=None, error=ErrorObject(code=-32700, message="parse error")),
        Response(id="x", error=ErrorObject(code=-32602, message="bad", data=[{"loc": ["a"]}])),
    ],
    ids=lambda f: type(f).__name__,
)
def test_envelopes_round_trip_through_json(frame: Request | Notification | Response) -> None:
    text = frame.model_dump_json()
    assert json.loads(text)["jsonrpc"] == "2.0"
    assert type(frame).model_validate_json(text) == frame


def test_envelopes_reject_another_protocol_version() -> None:
    with pytest.raises(ValidationError) as info:
        Request.model_validate({"jsonrpc": "1.0", "id": 1, "method": "ping"})
    assert [e["loc"] for e in info.value.errors()] == [("jsonrpc",)]


def test_cancel_params_name_the_request_id() -> None:
    assert CancelParams.model_validate({"id": "r-7"}).id == "r-7"
    with pytest.raises(ValidationError):
        CancelParams.model_validate({"id": 1, "reason": "bored"})


@pytest.mark.parametrize("bad_id", [True, False, 1.0, 1.5, None, [1], {"a": 1}])
def test_request_ids_that_are_not_strings_or_integers_are_rejected(bad_id: object) -> None:
    # The server rejects these ids (sidecar/rpc/server.py `_valid_id`); the shared envelope
    # model must agree, or a `true` id on the wire reads as request 1.
    with pytest.raises(ValidationError):
        Request.model_validate_json(json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "m"}))
