"""The anchor of the stream benchmark: the openai SDK alone consuming one paced stream.

`python -m bench.stream_sdk API_BASE ID TOKENS RATE` streams `stream-bench` from the paced model
with `openai.AsyncOpenAI(...).chat.completions.create(stream=True)`, reading every chunk's
delta as the simplest real consumer would, and prints one JSON line: the process CPU seconds
spent from the request to the end of the stream, the chunks read and whether the text is exact.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import openai

from bench.stream_model import HEAD, TAIL, expected_answer, prompt


async def consume(api_base: str, stream_id: str, tokens: int, rate: int) -> dict[str, object]:
    client = openai.AsyncOpenAI(base_url=api_base, api_key="x")
    parts: list[str] = []
    chunks = 0
    started = time.process_time()
    stream = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": prompt(stream_id, tokens, rate)}],
        stream=True,
    )
    async for chunk in stream:
        chunks += 1
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
    cpu = time.process_time() - started
    await client.close()
    text = "".join(parts)
    exact = text.removeprefix(HEAD).removesuffix(TAIL).strip() == expected_answer(tokens)
    return {"cpu_s": cpu, "chunks": chunks, "exact": exact}


def main() -> None:
    api_base, stream_id, tokens, rate = sys.argv[1:5]
    print(json.dumps(asyncio.run(consume(api_base, stream_id, int(tokens), int(rate)))))


if __name__ == "__main__":
    main()
