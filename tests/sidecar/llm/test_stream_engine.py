"""The coalescing OpenAI-compatible engine's reading of a server-sent event stream: the text is
exact however the bytes are cut (inside a UTF-8 character, inside a line), joined into few events,
and a malformed or failed stream is an error, never silent loss."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dspy import lm15

from sidecar.llm._stream_engine import (  # pyright: ignore[reportPrivateUsage]
    CoalescingOpenAIEngine,
    _ChatStream,  # pyright: ignore[reportPrivateUsage]
    _Counted,  # pyright: ignore[reportPrivateUsage]
    _Fed,  # pyright: ignore[reportPrivateUsage]
)

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


def _request() -> lm15.Request:
    return lm15.Request(model="openai/m", messages=(lm15.Message.user("hi"),))


async def _texts(data: bytes, step: int, fed: _Fed | None = None) -> list[str]:
    engine = CoalescingOpenAIEngine(api_key="x", api_base="http://127.0.0.1:9/v1", timeout_s=5)
    codec = _ChatStream(_request())
    codec.chunks = _Counted()
    texts: list[str] = []
    try:
        async for event in engine._events(_cut(data, step), codec, fed or _Fed()):  # pyright: ignore[reportPrivateUsage]
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


async def _slow(data: bytes, step: int) -> AsyncIterator[bytes]:
    """`data` in pieces that arrive one window apart (asyncio.sleep is the stream's pacing)."""
    import asyncio

    for i in range(0, len(data), step):
        await asyncio.sleep(0.011)
        yield data[i : i + step]


async def test_a_long_stream_keeps_its_text_not_a_chunk_per_window() -> None:
    pieces = [f"w{i} " for i in range(3000)]
    data = _body(pieces)
    engine = CoalescingOpenAIEngine(api_key="x", api_base="http://127.0.0.1:9/v1", timeout_s=5)
    codec = _ChatStream(_request())
    codec.chunks = _Counted()
    fed = _Fed()
    windows = 0
    try:
        async for event in engine._events(_slow(data, len(data) // 60), codec, fed):  # pyright: ignore[reportPrivateUsage]
            windows += event.type == "delta"
    finally:
        await engine.aclose()

    assert windows >= 30  # many windows, each fed to the codec
    assert len(codec.chunks) >= windows
    # Every text window is in one run; the finish chunk stands alone.
    assert len(fed.items) == 2
    [text, finish] = fed.chunks()
    assert text["choices"][0]["delta"]["content"] == "".join(pieces)
    assert finish["choices"][0]["finish_reason"] == "stop"


def test_dspy_s_codec_still_appends_every_chunk_it_is_fed() -> None:
    """The reason `_Counted` stands in for the codec's `chunks`: when this fails, DSPy no longer
    keeps the chunks and `_Counted` can go."""
    from dspy.clients._litellm import get_litellm

    litellm = get_litellm(feature="test")
    codec = _ChatStream(_request())
    chunk = json.loads(_sse({"content": "a"})[len(b"data: ") :])
    list(codec.feed(litellm.ModelResponseStream(**chunk)))
    list(codec.feed(litellm.ModelResponseStream(**chunk)))
    assert len(codec.chunks) == 2
    assert all(isinstance(c, litellm.ModelResponseStream) for c in codec.chunks)
