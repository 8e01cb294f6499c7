"""A paced model for the stream benchmark, in a process of its own: OpenAI-compatible
(`/v1/chat/completions`) and Anthropic (`/v1/messages`, for `BENCH_STREAM_MODEL=anthropic/...`).

`python -m bench.stream_model` prints its API base (ending in /v1) and serves until stdin closes.

Every streamed `POST /v1/chat/completions` (or `/v1/messages`, in Anthropic's events) answers
with DSPy's answer field, one SSE event per token, the way a provider streams: token `i` (a word
and a space, `token_text`) is due at `t0 + i / rate` and every token due is written as soon as
the loop wakes (about once a millisecond). What to stream is read from the request's last user
message, `stream-bench id=<id> tokens=<n> rate=<per second>`; anything
else gets a short answer. `GET /stats/<id>` returns when the last token was due and when it was
written (`time.monotonic()`, which is system-wide on Linux, so the bench compares it with its own
clock). A non-streamed request gets the whole answer at once.

The server is plain asyncio with pre-built SSE templates, so its own CPU per token (a few µs)
stays far below what it measures, and a separate process keeps it off the sidecar's figures.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass
from typing import Any

PROMPT_PATTERN = re.compile(rb"stream-bench id=(\w+) tokens=(\d+) rate=(\d+)")
HEAD = "[[ ## answer ## ]]\n"
TAIL = "\n\n[[ ## completed ## ]]"


_SYLLABLES = tuple(c + v for c in "bdfghklmnprstvwz" for v in "aeio")
VOCABULARY = tuple(a + b for a in _SYLLABLES for b in _SYLLABLES)
"""4,096 words, so a long answer has the vocabulary of prose rather than one new word per token
(a full-text index spends about 7x longer on 100,000 distinct words than on prose)."""


def token_text(index: int) -> str:
    """Token `index`: a word of the vocabulary (a fixed pseudo-random walk over it), then a space.
    Deterministic, so the whole answer can be compared exactly, order included."""
    return VOCABULARY[(index * 2_654_435_761) % len(VOCABULARY)] + " "


def expected_answer(tokens: int) -> str:
    """The answer field a stream of `tokens` tokens carries (DSPy strips the trailing space)."""
    return "".join(token_text(i) for i in range(tokens)).strip()


def prompt(stream_id: str, tokens: int, rate: int) -> str:
    return f"stream-bench id={stream_id} tokens={tokens} rate={rate}"


@dataclass
class _Stream:
    due_last: float = 0.0
    written_last: float = 0.0
    done: bool = False


STATS: dict[str, _Stream] = {}


def _chunk_template(model: str) -> tuple[bytes, bytes]:
    head = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "delta": {"content": "@@"}, "finish_reason": None}],
        },
        separators=(",", ":"),
    ).encode()
    before, after = head.split(b'"@@"')
    return b"data: " + before, after + b"\n\n"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _anthropic_template() -> tuple[bytes, bytes]:
    head = json.dumps(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "@@"}},
        separators=(",", ":"),
    ).encode()
    before, after = head.split(b'"@@"')
    return b"event: content_block_delta\ndata: " + before, after + b"\n\n"


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def _anthropic_ends(model: str, total: int) -> tuple[bytes, bytes]:
    """The events before the first text delta and after the last of an Anthropic stream."""
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": model}
    start = _sse(
        "message_start",
        {"message": {**message, "content": [], "stop_reason": None, "usage": usage}},
    ) + _sse("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    end = (
        _sse("content_block_stop", {"index": 0})
        + _sse(
            "message_delta",
            {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": total}},
        )
        + _sse("message_stop", {})
    )
    return start, end


def _openai_end(model: str, total: int) -> bytes:
    final = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": total, "total_tokens": total + 10},
        }
    ).encode()
    return b"data: " + final + b"\n\ndata: [DONE]\n\n"


async def _stream(
    writer: asyncio.StreamWriter, model: str, spec: re.Match[bytes], anthropic: bool
) -> None:
    stream_id = spec.group(1).decode()
    total, rate = int(spec.group(2)), int(spec.group(3))
    if anthropic:
        before, after = _anthropic_template()
        start, end = _anthropic_ends(model, total)
    else:
        before, after = _chunk_template(model)
        start, end = b"", _openai_end(model, total)
    stats = STATS[stream_id] = _Stream()
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )

    def event(text: str) -> bytes:
        return before + json.dumps(text).encode() + after

    writer.write(_chunked(start + event(HEAD)))
    t0 = time.monotonic()
    stats.due_last = t0 + (total - 1) / rate
    sent = 0
    while sent < total:
        now = time.monotonic()
        due = min(total, int((now - t0) * rate) + 1)
        if due > sent:
            writer.write(_chunked(b"".join(event(token_text(i)) for i in range(sent, due))))
            sent = due
            await writer.drain()
        if sent < total:
            await asyncio.sleep(max(0.0, t0 + sent / rate - time.monotonic()))
    stats.written_last = time.monotonic()
    writer.write(_chunked(event(TAIL) + end))
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    stats.done = True


def _whole(model: str, text: str) -> bytes:
    body = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    ).encode()
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


def _whole_anthropic(model: str, text: str) -> bytes:
    return _json_reply(
        {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }
    )


def _json_reply(obj: Any, status: str = "200 OK") -> bytes:
    body = json.dumps(obj).encode()
    return b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status.encode(),
        len(body),
        body,
    )


async def _serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Answer one request; False when the connection is over."""
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)
    }
    body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    if method == "GET" and path.startswith("/stats/"):
        stats = STATS.get(path.rsplit("/", 1)[1])
        writer.write(_json_reply(None if stats is None else stats.__dict__))
        return True
    anthropic = path.rstrip("/").endswith("/v1/messages")
    if method != "POST" or not (anthropic or path.rstrip("/").endswith("/chat/completions")):
        writer.write(_json_reply({"error": {"message": f"no route {path}"}}, "404 Not Found"))
        return True
    request = json.loads(body)
    model = str(request.get("model") or "bench")
    spec = PROMPT_PATTERN.search(body)
    if spec is not None and request.get("stream"):
        await _stream(writer, model, spec, anthropic)
        return True
    text = f"{HEAD}{expected_answer(int(spec.group(2)) if spec else 3)}{TAIL}"
    writer.write(_whole_anthropic(model, text) if anthropic else _whole(model, text))
    return True


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while await _serve_one(reader, writer):
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def amain() -> None:
    server = await asyncio.start_server(_connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(amain())
