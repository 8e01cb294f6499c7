"""OpenAI dialect: `POST /v1/chat/completions` (JSON or SSE), `POST /v1/embeddings`
(`concept_vector`) and `GET /v1/models`.

Follows the real format closely because the sidecar's DSPy -> LiteLLM planner parses it: `chatcmpl-`
ids, `object` fields, `created`, `model` echoed from the request, `system_fingerprint`, `usage`
with the detail objects, streamed `delta.tool_calls` fragments keyed by `index`, a final usage
chunk with `choices: []` when `stream_options.include_usage`, then `data: [DONE]`.

    with openai_chat_server([Reply.tool_call("plan", {"steps": 2}), Reply.text("done")]) as srv:
        litellm.completion(model="openai/scripted", api_base=srv.url + "/v1", api_key="x", ...)
"""

from __future__ import annotations

import re
import time
import uuid
import zlib
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

FINGERPRINT = "fp_scripted01"


def _usage(request: RecordedRequest, reply: Reply) -> dict[str, Any]:
    body = request.body if isinstance(request.body, dict) else {}
    prompt = estimate_tokens(body.get("messages", []))
    completion = estimate_tokens(
        (reply.content or "") + "".join(c.arguments_json() for c in reply.calls)
    )
    if reply.usage:
        prompt = reply.usage.get("input_tokens", prompt)
        completion = reply.usage.get("output_tokens", completion)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _call_ids(reply: Reply) -> list[str]:
    return [c.id or f"call_{uuid.uuid4().hex[:24]}" for c in reply.calls]


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.calls else "stop")


EMBEDDING_DIMS = 256
CONCEPTS = {
    "editor": "publishing",
    "edits": "publishing",
    "publisher": "publishing",
    "publishes": "publishing",
    "manuscript": "book",
    "novel": "book",
    "book": "book",
    "due": "deadline",
    "deadline": "deadline",
}
"""Words the scripted embedding model treats as one meaning; any other word is its own."""
_STOPWORDS = frozenset(
    ["a", "an", "and", "for", "is", "it", "my", "of", "the", "to", "when", "which", "who", "what"]
)


def concept_vector(text: str) -> list[float]:
    """A deterministic embedding: one dimension per meaning of the text's words (`CONCEPTS`),
    so texts that share no word can still be close, as with a real embedding model."""
    vector = [0.0] * EMBEDDING_DIMS
    for word in re.findall(r"\w+", text.lower()):
        if word in _STOPWORDS or word.isdigit():  # numbers carry no meaning here
            continue
        concept = CONCEPTS.get(word, word)
        vector[zlib.crc32(concept.encode()) % EMBEDDING_DIMS] += 1.0
    return vector


class OpenAIChatDialect:
    """Renders `Reply` values as Chat Completions responses."""

    name = "openai_chat"

    def __init__(self, models: Iterable[str] = ("scripted",)) -> None:
        self.models = list(models)
        self.created = int(time.time())

    def is_generation(self, request: RecordedRequest) -> bool:
        return request.path.rstrip("/").endswith("/chat/completions")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {
            401: ("authentication_error", "invalid_api_key"),
            404: ("invalid_request_error", "model_not_found"),
            429: ("rate_limit_error", "rate_limit_exceeded"),
        }.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        return {"error": {"message": message, "type": kind[0], "param": None, "code": kind[1]}}

    def handle_other(self, exchange: Exchange) -> None:
        path = exchange.request.path.rstrip("/")
        if exchange.request.method == "POST" and path.endswith("/embeddings"):
            body = exchange.request.body if isinstance(exchange.request.body, dict) else {}
            texts = body.get("input", [])
            texts = [texts] if isinstance(texts, str) else list(texts)
            data = [
                {"object": "embedding", "index": i, "embedding": concept_vector(str(t))}
                for i, t in enumerate(texts)
            ]
            tokens = sum(len(str(t).split()) for t in texts)
            usage = {"prompt_tokens": tokens, "total_tokens": tokens}
            model = body.get("model", "scripted-embedding")
            exchange.send_json(
                200, {"object": "list", "data": data, "model": model, "usage": usage}
            )
            return
        if exchange.request.method == "GET" and path.endswith("/models"):
            exchange.send_json(
                200, {"object": "list", "data": [self._model(m) for m in self.models]}
            )
            return
        if exchange.request.method == "GET" and "/models/" in path:
            model_id = path.split("/models/", 1)[1]
            if model_id in self.models:
                exchange.send_json(200, self._model(model_id))
                return
        exchange.send_json(404, self.error_body(404, f"scripted: no route {path}"))

    def _model(self, model_id: str) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": self.created, "owned_by": "scripted"}

    def render(self, exchange: Exchange, reply: Reply) -> None:
        if exchange.request.stream:
            self._stream(exchange, reply)
        else:
            exchange.send_json(200, self._completion(exchange.request, reply))

    def _completion(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.content,
            "refusal": None,
            "annotations": [],
        }
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json()},
                }
                for c, call_id in zip(reply.calls, _call_ids(reply), strict=True)
            ]
        elif message["content"] is None:
            message["content"] = ""
        return {
            **self._envelope(request, "chat.completion"),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(reply)}
            ],
            "usage": _usage(request, reply),
            "service_tier": "default",
        }

    def _envelope(self, request: RecordedRequest, obj: str) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else {}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:29]}",
            "object": obj,
            "created": int(time.time()),
            "model": body.get("model") or self.models[0],
            "system_fingerprint": FINGERPRINT,
        }

    def _stream(self, exchange: Exchange, reply: Reply) -> None:
        request = exchange.request
        body = request.body if isinstance(request.body, dict) else {}
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = self._envelope(request, "chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            out: dict[str, Any] = {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if include_usage:
                out["usage"] = None
            exchange.sse(out)

        exchange.start_stream()
        chunk({"role": "assistant", "content": "", "refusal": None})
        exchange.pause_mid_stream()
        if reply.content:
            for piece in split_chunks(reply.content, reply.chunk_size):
                chunk({"content": piece})
        for index, (call, call_id) in enumerate(zip(reply.calls, _call_ids(reply), strict=True)):
            head = {"index": index, "id": call_id, "type": "function"}
            chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
            for piece in split_chunks(call.arguments_json(), reply.chunk_size):
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        exchange.pause_mid_stream(before_finish=True)
        if reply.cut_off:
            return  # the handler returns: the connection closes mid-answer
        chunk({}, _finish(reply))
        if include_usage:
            exchange.sse({**base, "choices": [], "usage": _usage(request, reply)})
        exchange.sse("[DONE]")


def openai_chat_server(
    script: Iterable[Responder] = (),
    *,
    fallback: Responder | None = None,
    models: Iterable[str] = ("scripted",),
) -> ScriptedModelServer:
    """An (unstarted) Chat Completions server; use as a context manager or call `.start()`."""
    return ScriptedModelServer(OpenAIChatDialect(models), script, fallback=fallback)
