"""The coalescing OpenAI-compatible engine's reading of a server-sent event stream: the text is
exact however the bytes are cut (inside a UTF-8 character, inside a line), joined into few events,
and a malformed or failed stream is an error, never silent loss."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dspy import lm15

from sidecar.llm._stream_engine import CoalescingOpenAIEngine, _ChatStream  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.anyio

PIECES = ["Grüße ", "😀", " 日本語", "\r\n", "tab\tend", "é", "\u200d✓", " [1] ", "\n\n"]


def _sse(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


def _body(pieces: list[str]) -> bytes:
    return (
        _sse({"role": "assistant", "content": ""})
        + b"".join(_sse({"content": p}) for p in pieces)
        + _sse({}, "stop")
        + b"data: [DONE]\n\n"
    )


async def _cut(data: bytes, step: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), step):
        yield data[i : i + step]


async def _texts(data: bytes, step: int) -> list[str]:
    engine = CoalescingOpenAIEngine(api_key="x", api_base="http://127.0.0.1:9/v1", timeout_s=5)
    request = lm15.Request(model="openai/m", messages=(lm15.Message.user("hi"),))
    texts: list[str] = []
    try:
        async for event in engine._events(_cut(data, step), _ChatStream(request), []):  # pyright: ignore[reportPrivateUsage]
            if event.type == "delta" and event.delta.type == "text":
                texts.append(event.delta.text)
    finally:
        await engine.aclose()
    return texts


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 1 << 20])
async def test_text_is_exact_however_the_bytes_are_cut(step: int) -> None:
    texts = await _texts(_body(PIECES), step)
    assert "".join(texts) == "".join(PIECES)


async def test_chunks_read_together_become_one_text_event() -> None:
    pieces = [f"{i} " for i in range(5000)]
    texts = await _texts(_body(pieces), 1 << 20)
    assert "".join(texts) == "".join(pieces)
    assert len(texts) == 1


async def test_a_malformed_event_is_an_error() -> None:
    data = _sse({"content": "ok"}) + b"data: {not json\n\n"
    with pytest.raises(lm15.ProviderError):
        await _texts(data, 5)


async def test_an_error_event_in_the_stream_is_an_error() -> None:
    data = _sse({"content": "ok"}) + b'data: {"error": {"message": "overloaded"}}\n\n'
    with pytest.raises(lm15.ProviderError):
        await _texts(data, 1 << 20)
