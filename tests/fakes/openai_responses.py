"""OpenAI Responses dialect: `POST /v1/responses` (SSE or JSON) and `GET /v1/models` (Codex).

Codex reaches this through a custom model provider (`wire_api = "responses"`). Streams follow the
real event sequence with `sequence_number`s: `response.created`, `response.in_progress`, per output
item `response.output_item.added`, text parts (`content_part.added`, `output_text.delta`/`.done`,
`content_part.done`) or `function_call_arguments.delta`/`.done`, `response.output_item.done`, and
finally `response.completed` with usage. MCP tools offered as `{"type": "namespace", ...}` are
called with `ToolCall(name, args, namespace="mcp__server")`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from tests.fakes.model_server import (
    Exchange,
    RecordedRequest,
    Reply,
    Responder,
    ScriptedModelServer,
    ToolCall,
    estimate_tokens,
    split_chunks,
)


def _hex() -> str:
    return uuid.uuid4().hex


def _items(reply: Reply) -> list[dict[str, Any]]:
    """The reply's output items in their completed form."""
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        summary = [{"type": "summary_text", "text": reply.reasoning}]
        items.append({"id": "rs_" + _hex(), "type": "reasoning", "summary": summary})
    if reply.content is not None or not reply.calls:
        text = reply.content or ""
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        items.append(
            {
                "id": "msg_" + _hex(),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    items.extend(_function_call(call) for call in reply.calls)
    return items


def _function_call(call: ToolCall) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": "fc_" + _hex(),
        "type": "function_call",
        "status": "completed",
        "arguments": call.arguments_json(),
        "call_id": call.id or "call_" + _hex()[:24],
        "name": call.name,
    }
    if call.namespace:
        item["namespace"] = call.namespace
    return item


def _usage(request: RecordedRequest, reply: Reply, items: list[dict[str, Any]]) -> dict[str, Any]:
    body = request.body if isinstance(request.body, dict) else {}
    prompt = estimate_tokens([body.get("instructions"), body.get("input")])
    completion = estimate_tokens(items)
    if reply.usage:
        prompt = reply.usage.get("input_tokens", prompt)
        completion = reply.usage.get("output_tokens", completion)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


class OpenAIResponsesDialect:
    """Renders `Reply` values as Responses API results."""

    name = "openai_responses"

    def __init__(self, models: Iterable[str] = ("scripted",)) -> None:
        self.models = list(models)
        self.created = int(time.time())

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.path.rstrip("/").endswith("/responses")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    def handle_other(self, exchange: Exchange) -> None:
        request = exchange.request
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            data = [
                {"id": m, "object": "model", "created": self.created, "owned_by": "scripted"}
                for m in self.models
            ]
            # `models` is the Codex/ChatGPT-backend model-metadata shape; empty = use defaults.
            exchange.send_json(200, {"object": "list", "data": data, "models": []})
            return
        message = f"scripted: no route {request.path}"
        exchange.send_json(404, self.error_body(404, message))

    def _response(
        self,
        request: RecordedRequest,
        response_id: str,
        status: str,
        output: list[dict[str, Any]],
        usage: Any,
    ) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else {}
        return {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": body.get("model") or self.models[0],
            "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "previous_response_id": body.get("previous_response_id"),
            "usage": usage,
        }

    def render(self, exchange: Exchange, reply: Reply) -> None:
        request = exchange.request
        response_id = "resp_" + _hex()
        items = _items(reply)
        final = self._response(
            request, response_id, "completed", items, _usage(request, reply, items)
        )
        if not request.stream:
            exchange.send_json(200, final)
            return
        stream = _Stream(exchange)
        exchange.start_stream()
        pending = self._response(request, response_id, "in_progress", [], None)
        stream.emit("response.created", response=pending)
        stream.emit("response.in_progress", response=pending)
        exchange.pause_mid_stream()
        for index, item in enumerate(items):
            _stream_item(stream, index, item, reply.chunk_size)
        stream.emit("response.completed", response=final)


class _Stream:
    """Numbers SSE events the way the real API does (`sequence_number`)."""

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange
        self.seq = 0

    def emit(self, kind: str, **fields: Any) -> None:
        self.exchange.sse({"type": kind, "sequence_number": self.seq, **fields}, kind)
        self.seq += 1


def _stream_item(stream: _Stream, index: int, item: dict[str, Any], size: int) -> None:
    at = {"output_index": index}
    if item["type"] == "message":
        stream.emit(
            "response.output_item.added",
            **at,
            item={**item, "status": "in_progress", "content": []},
        )
        part = item["content"][0]
        ref = {"item_id": item["id"], **at, "content_index": 0}
        stream.emit("response.content_part.added", **ref, part={**part, "text": ""})
        for piece in split_chunks(part["text"], size):
            stream.emit("response.output_text.delta", **ref, delta=piece, logprobs=[])
        stream.emit("response.output_text.done", **ref, text=part["text"], logprobs=[])
        stream.emit("response.content_part.done", **ref, part=part)
    elif item["type"] == "function_call":
        stream.emit(
            "response.output_item.added",
            **at,
            item={**item, "status": "in_progress", "arguments": ""},
        )
        ref = {"item_id": item["id"], **at}
        for piece in split_chunks(item["arguments"], size):
            stream.emit("response.function_call_arguments.delta", **ref, delta=piece)
        stream.emit("response.function_call_arguments.done", **ref, arguments=item["arguments"])
    else:
        stream.emit("response.output_item.added", **at, item={**item, "summary": []})
        for s_index, summary in enumerate(item["summary"]):
            ref = {"item_id": item["id"], **at, "summary_index": s_index}
            stream.emit("response.reasoning_summary_text.done", **ref, text=summary["text"])
    stream.emit("response.output_item.done", **at, item=item)


def responses_server(
    script: Iterable[Responder] = (),
    *,
    fallback: Responder | None = None,
    models: Iterable[str] = ("scripted",),
) -> ScriptedModelServer:
    """An (unstarted) Responses API server; use as a context manager or call `.start()`."""
    return ScriptedModelServer(OpenAIResponsesDialect(models), script, fallback=fallback)
