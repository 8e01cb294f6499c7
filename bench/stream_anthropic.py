"""`python -m bench stream_anthropic`: CPU per streamed chunk of an Anthropic Messages stream.

The scripted Anthropic server (`tests.fakes.anthropic_messages`, on 127.0.0.1 in this process)
streams `TOKENS` answer tokens of five characters, one `text_delta` event each, pausing
`1 / RATE` s after every event (so about `RATE` tokens/s; the rate reached is printed). Each
consumer of `bench.stream_anthropic_client` reads the whole stream once in a process of its own:
LiteLLM's `acompletion(stream=True)` (the path DSPy's LiteLLM engine takes), DSPy's native lm15
engine, the official `anthropic` SDK when it is installed (it is not a dependency: put it on
`PYTHONPATH`), httpx lines + `json.loads` (issue 19's floor) and Atrium's
`CoalescingAnthropicEngine`. For each it prints the CPU µs per answer token, the chunks or
events it handed on, whether its text was exactly the answer, and its ratio to httpx and to
LiteLLM. Figures are for choosing a path, so there are no targets.

`BENCH_STREAM_TOKENS` overrides the token count (default 20,000) and `BENCH_STREAM_RATE` the
rate (default 2,000). Figures measured on this project are in bench/NOTES-stream.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from bench._proc import REPO
from bench._report import Figure, Line, say, show
from bench.stream_anthropic_client import BENCH_PROMPT, CONSUMERS
from bench.stream_model import token_text
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.model_server import RecordedRequest, Reply

NAME = "stream_anthropic"
TOKENS = int(os.environ.get("BENCH_STREAM_TOKENS", "20000"))
RATE = int(os.environ.get("BENCH_STREAM_RATE", "2000"))
TOKEN_CHARS = 5  # every `token_text` is a four-letter word and a space

LABELS = {
    "litellm": "LiteLLM acompletion(stream=True)",
    "lm15": "DSPy's native lm15 engine",
    "sdk": "anthropic SDK create(stream=True)",
    "httpx": "httpx lines + json.loads",
    "engine": "CoalescingAnthropicEngine",
}


def answer(tokens: int) -> str:
    return "".join(token_text(i) for i in range(tokens))


def _responder(text: str) -> Any:
    def reply(request: RecordedRequest) -> Reply:
        if BENCH_PROMPT in json.dumps(request.body):
            return Reply.text(text, chunk_size=TOKEN_CHARS, chunk_delay=1 / RATE)
        return Reply.text("warm up", chunk_size=2)

    return reply


async def _consume(kind: str, base: str) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.stream_anthropic_client",
        kind,
        base,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        return {"failed": proc.returncode}
    return json.loads(out)


async def run() -> list[Line]:
    say(f"stream_anthropic: {TOKENS:,} tokens at about {RATE:,}/s, one consumer at a time")
    text = answer(TOKENS)
    results: dict[str, dict[str, Any]] = {}
    with anthropic_server(fallback=_responder(text)) as server:
        for kind in CONSUMERS:
            results[kind] = await _consume(kind, server.url)
    lines: list[Line] = []
    per_token = {kind: r["cpu_s"] / TOKENS * 1e6 for kind, r in results.items() if "cpu_s" in r}
    httpx = per_token.get("httpx")
    litellm = per_token.get("litellm")
    for kind, result in results.items():
        label = LABELS[kind]
        if "missing" in result:
            lines.append(Figure(NAME, label, "not installed"))
            continue
        if "failed" in result:
            lines.append(Figure(NAME, label, f"failed (exit {result['failed']})"))
            continue
        us = per_token[kind]
        ratios = []
        if httpx:
            ratios.append(f"{us / httpx:.2f}x httpx")
        if litellm:
            ratios.append(f"{us / litellm:.2f}x LiteLLM")
        rate = TOKENS / result["wall_s"]
        shown = (
            f"{us:.0f} µs/token, {', '.join(ratios)}; {result['chunks']:,} chunks, "
            f"{rate:,.0f} tokens/s, text {'exact' if result['text'] == text else 'WRONG'}"
        )
        lines.append(Figure(NAME, label, shown))
    for line in lines:
        show(line)
    return lines
