"""Anthropic Messages dialect: `POST /v1/messages` (SSE or JSON), token counting, model listing.

This is what Claude Code talks to when `ANTHROPIC_BASE_URL` points here (it posts to
`/v1/messages?beta=true` with `stream: true`). Streams follow the real event order: `message_start`,
`ping`, per block `content_block_start` / `content_block_delta` (`thinking_delta` +
`signature_delta`, `text_delta`, `input_json_delta`) / `content_block_stop`, then `message_delta`
(stop_reason, usage) and `message_stop`.

    with anthropic_server([Reply.tool_call("Bash", {"command": "echo hi"}), Reply.text("done")]):
        ...
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from typing import Any

from tests.fakes.model_server import (
    Exchange,
    RecordedRequest,
    Reply,
    Responder,
    ScriptedModelServer,
    estimate_tokens,
    split_chunks,
)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    """The reply's content blocks, complete (as in a non-streaming response)."""
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        signature = "sig_" + uuid.uuid4().hex
        blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": signature})
    if reply.content:
        blocks.append({"type": "text", "text": reply.content})
    for call in reply.calls:
        arguments = json.loads(call.arguments_json()) if call.arguments else {}
        call_id = call.id or "toolu_" + uuid.uuid4().hex[:24]
        blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": arguments})
    return blocks


def _usage(request: RecordedRequest, reply: Reply) -> dict[str, Any]:
    body = request.body if isinstance(request.body, dict) else {}
    prompt = estimate_tokens([body.get("system"), body.get("messages")])
    completion = estimate_tokens(_blocks(reply))
    if reply.usage:
        prompt = reply.usage.get("input_tokens", prompt)
        completion = reply.usage.get("output_tokens", completion)
    return {
        "input_tokens": prompt,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": completion,
        "service_tier": "standard",
    }


class AnthropicMessagesDialect:
    """Renders `Reply` values as Anthropic Messages responses."""

    name = "anthropic_messages"

    def __init__(self, models: Iterable[str] = ("claude-scripted",)) -> None:
        self.models = list(models)

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.path.rstrip("/").endswith("/v1/messages")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error")
        return {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": "req_" + uuid.uuid4().hex[:24],
        }

    def handle_other(self, exchange: Exchange) -> None:
        request = exchange.request
        path = request.path.rstrip("/")
        body = request.body if isinstance(request.body, dict) else {}
        if request.method == "POST" and path.endswith("/messages/count_tokens"):
            tokens = estimate_tokens([body.get("system"), body.get("messages"), body.get("tools")])
            exchange.send_json(200, {"input_tokens": tokens})
        elif request.method == "GET" and path.endswith("/v1/models"):
            data = [self._model(m) for m in self.models]
            exchange.send_json(
                200,
                {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"],
                    "last_id": data[-1]["id"],
                },
            )
        elif request.method == "GET" and "/v1/models/" in path:
            exchange.send_json(200, self._model(path.split("/v1/models/", 1)[1]))
        else:
            exchange.send_json(404, self.error_body(404, f"scripted: no route {path}"))

    @staticmethod
    def _model(model_id: str) -> dict[str, Any]:
        return {
            "type": "model",
            "id": model_id,
            "display_name": model_id,
            "created_at": "2025-01-01T00:00:00Z",
        }

    def _message(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else {}
        stop = reply.finish_reason or ("tool_use" if reply.calls else "end_turn")
        return {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or self.models[0],
            "content": _blocks(reply),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": _usage(request, reply),
        }

    def render(self, exchange: Exchange, reply: Reply) -> None:
        message = self._message(exchange.request, reply)
        if not exchange.request.stream:
            exchange.send_json(200, message, [("request-id", "req_" + uuid.uuid4().hex[:24])])
            return
        usage = message["usage"]
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        exchange.start_stream()
        exchange.sse({"type": "message_start", "message": start}, "message_start")
        exchange.sse({"type": "ping"}, "ping")
        exchange.pause_mid_stream()
        for index, block in enumerate(message["content"]):
            _stream_block(exchange, index, block, reply.chunk_size)
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        out_usage = {"output_tokens": usage["output_tokens"]}
        exchange.sse({"type": "message_delta", "delta": delta, "usage": out_usage}, "message_delta")
        exchange.sse({"type": "message_stop"}, "message_stop")


def _stream_block(exchange: Exchange, index: int, block: dict[str, Any], size: int) -> None:
    kind = block["type"]
    if kind == "thinking":
        head: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": p} for p in split_chunks(block["thinking"], size)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        head = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in split_chunks(block["text"], size)]
    else:
        head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        encoded = json.dumps(block["input"]) if block["input"] else ""
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [
            {"type": "input_json_delta", "partial_json": p}
            for p in split_chunks(encoded, size)
            if p
        ]
    event = "content_block_start"
    exchange.sse({"type": event, "index": index, "content_block": head}, event)
    for delta in deltas:
        event = "content_block_delta"
        exchange.sse({"type": event, "index": index, "delta": delta}, event)
    exchange.sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def anthropic_server(
    script: Iterable[Responder] = (),
    *,
    fallback: Responder | None = None,
    models: Iterable[str] = ("claude-scripted",),
) -> ScriptedModelServer:
    """An (unstarted) Anthropic Messages server; use as a context manager or call `.start()`."""
    return ScriptedModelServer(AnthropicMessagesDialect(models), script, fallback=fallback)
