"""One consumer of a paced Anthropic Messages stream, in a process of its own.

`python -m bench.stream_anthropic_client KIND BASE_URL` streams the scripted Anthropic server's
long answer once with the consumer `KIND` and prints one JSON line: the process CPU seconds from
the request to the end of the stream, the chunks (or events) it handed on, and the text it read.
A short stream goes first, so lazy imports and the first connection are not counted.

Kinds, from the most to the least work per chunk:

- `litellm`: `litellm.acompletion(model="anthropic/...", stream=True, api_base=...)` with
  `litellm.disable_streaming_logging = True`, reading each chunk's delta;
- `lm15`: DSPy's own native engine (`AsyncLM15Engine`, lm15's Anthropic door) with the base URL
  given as DSPy passes `api_base`, reading each stream event;
- `sdk`: the official `anthropic` SDK, `messages.create(stream=True)`, reading each event (skipped
  with `"missing": true` when the package is not installed);
- `httpx`: httpx `aiter_lines` and one `json.loads` per `data:` line (issue 19's floor);
- `engine`: Atrium's `CoalescingAnthropicEngine`, reading each stream event it yields.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL = "claude-sonnet-4-6"
WARM_PROMPT = "warm"
BENCH_PROMPT = "bench"
KEY = "sk-ant-bench"

Consumer = Callable[[str, str], Awaitable[tuple[int, str]]]


async def _litellm(base: str, prompt: str) -> tuple[int, str]:
    import litellm

    litellm.disable_streaming_logging = True
    litellm.suppress_debug_info = True
    stream: Any = await litellm.acompletion(
        model=f"anthropic/{MODEL}",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        api_base=base,
        api_key=KEY,
        max_tokens=64_000,
    )
    chunks, parts = 0, []
    async for chunk in stream:
        chunks += 1
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
    return chunks, "".join(parts)


def _request(prompt: str) -> Any:
    from dspy import lm15

    return lm15.Request(
        model=f"anthropic/{MODEL}",
        messages=(lm15.Message.user(prompt),),
        config=lm15.Config(max_tokens=64_000),
    )


async def _events(engine: Any, prompt: str) -> tuple[int, str]:
    chunks, parts = 0, []
    async for event in engine.stream(_request(prompt)):
        chunks += 1
        if event.type == "delta" and event.delta.type == "text":
            parts.append(event.delta.text)
    return chunks, "".join(parts)


_ENGINES: dict[str, Any] = {}


async def _lm15(base: str, prompt: str) -> tuple[int, str]:
    from dspy.clients.engines.lm15_engine import AsyncLM15Engine
    from dspy.lm15 import RouterConfig

    engine = _ENGINES.get("lm15")
    if engine is None:
        config = RouterConfig(api_keys={"anthropic": KEY}, base_urls={"anthropic": base + "/v1"})
        engine = _ENGINES["lm15"] = AsyncLM15Engine(config)
    return await _events(engine, prompt)


async def _engine(base: str, prompt: str) -> tuple[int, str]:
    from sidecar.llm._anthropic_engine import CoalescingAnthropicEngine

    engine = _ENGINES.get("engine")
    if engine is None:
        engine = _ENGINES["engine"] = CoalescingAnthropicEngine(
            api_key=KEY, api_base=base, timeout_s=60.0
        )
    return await _events(engine, prompt)


async def _sdk(base: str, prompt: str) -> tuple[int, str]:
    anthropic: Any = importlib.import_module("anthropic")  # not a dependency of the project
    client = _ENGINES.get("sdk")
    if client is None:
        client = _ENGINES["sdk"] = anthropic.AsyncAnthropic(base_url=base, api_key=KEY)
    stream = await client.messages.create(
        model=MODEL,
        max_tokens=64_000,
        messages=[{"role": "user", "content": prompt}],
        stream=True,
    )
    chunks, parts = 0, []
    async for event in stream:
        chunks += 1
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            parts.append(event.delta.text)
    return chunks, "".join(parts)


async def _httpx(base: str, prompt: str) -> tuple[int, str]:
    import httpx

    body = {
        "model": MODEL,
        "max_tokens": 64_000,
        "stream": True,
        "messages": [{"role": "user", "content": prompt}],
    }
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    chunks, parts = 0, []
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("POST", base + "/v1/messages", json=body, headers=headers) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            chunks += 1
            if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
                parts.append(event["delta"]["text"])
    return chunks, "".join(parts)


CONSUMERS: dict[str, Consumer] = {
    "litellm": _litellm,
    "lm15": _lm15,
    "sdk": _sdk,
    "httpx": _httpx,
    "engine": _engine,
}


async def consume(kind: str, base: str) -> dict[str, object]:
    consumer = CONSUMERS[kind]
    if kind == "sdk" and importlib.util.find_spec("anthropic") is None:
        return {"missing": True}
    await consumer(base, WARM_PROMPT)
    started, wall = time.process_time(), time.monotonic()
    chunks, text = await consumer(base, BENCH_PROMPT)
    return {
        "cpu_s": time.process_time() - started,
        "wall_s": time.monotonic() - wall,
        "chunks": chunks,
        "text": text,
    }


def main() -> None:
    kind, base = sys.argv[1:3]
    print(json.dumps(asyncio.run(consume(kind, base))))


if __name__ == "__main__":
    main()
