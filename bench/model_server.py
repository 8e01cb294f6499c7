"""The scripted model for the turn benchmarks, in a process of its own.

It speaks OpenAI Chat Completions (`tests.fakes.openai_chat`) on 127.0.0.1 and scripts every turn
the same way: the request that opens a turn gets a `workspace__read` call, the request that
carries the tool result gets the answer. Deciding from the request keeps the script in
step with any number of turns and clients, and a separate process keeps the server's work off
the CPU time of whatever is measured.

`python -m bench.model_server` prints its base URL (ending in /v1) and serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

from bench._proc import REPO
from tests.fakes.model_server import RecordedRequest, Reply
from tests.fakes.openai_chat import openai_chat_server

MODEL = "openai/gpt-4o-mini"  # LiteLLM knows it supports function calling: the native path
API_KEY = "x"
ANSWER = "The notes say the river is wide. Nothing else is in them yet; shall I add more?"
READ_ARGS = {"path": "notes.md"}


COMPACTING = "You are compacting a long conversation"
"""How the compaction request's instructions begin (`sidecar.llm.compaction.INSTRUCTIONS`)."""
SUMMARY = "The author asked what the notes say, many times; each time they said the river is wide."


def respond(request: RecordedRequest) -> Reply:
    raw: object = request.body
    body = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
    messages = cast(list[dict[str, Any]], body.get("messages") or [])
    if messages and COMPACTING in str(messages[0].get("content")):
        # A long thread outgrew its recent share: summarize, as a model would, so the thread
        # goes on at the size a real one keeps.
        text = f"MEMORIES:\n- none\nSUMMARY:\n{SUMMARY}"
        return Reply.text(f"[[ ## answer ## ]]\n{text}\n\n[[ ## completed ## ]]")
    # DSPy follows the tool results with a user message restating the output format.
    if any(m.get("role") == "tool" for m in messages[-2:]):
        return Reply.text(f"[[ ## answer ## ]]\n{ANSWER}\n\n[[ ## completed ## ]]")
    return Reply.tool_call("workspace__read", READ_ARGS)


@asynccontextmanager
async def model_server(*args: str) -> AsyncGenerator[str]:
    """Run the scripted model in a child process; yields its API base (…/v1)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.model_server",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            line = await proc.stdout.readline()
        if not line:
            raise RuntimeError("the scripted model server did not start")
        yield line.decode().strip()
    finally:
        proc.stdin.close()
        async with asyncio.timeout(10):
            await proc.wait()


MODEL_LATENCY_S = 0.2


def answer_at_once(request: RecordedRequest) -> Reply:
    """For subagents: every request gets its answer after a fixed model latency."""
    del request
    return Reply.text("[[ ## answer ## ]]\ndone\n\n[[ ## completed ## ]]").delayed(MODEL_LATENCY_S)


TASK_HOLD_S = 120.0


def hold_tasks(request: RecordedRequest) -> Reply:
    """For the main agent beside busy subagents: a subagent's request (its first user message
    is its task) is held for two minutes, so its task keeps running; every other request gets
    its answer at once, streamed."""
    raw: object = request.body
    body = cast(dict[str, Any], raw) if isinstance(raw, dict) else {}
    messages = cast(list[dict[str, Any]], body.get("messages") or [])
    users = [m for m in messages if m.get("role") == "user"]
    if users and "Task: " in str(users[0].get("content")):
        return Reply.text("[[ ## answer ## ]]\ndone\n\n[[ ## completed ## ]]").delayed(TASK_HOLD_S)
    return Reply.text(f"[[ ## answer ## ]]\n{ANSWER}\n\n[[ ## completed ## ]]")


def main() -> None:
    modes = {"--answer-at-once": answer_at_once, "--hold-tasks": hold_tasks}
    chosen = [modes[arg] for arg in sys.argv[1:] if arg in modes]
    fallback = chosen[0] if chosen else respond
    with openai_chat_server(fallback=fallback) as server:
        # A long thread sends ten thousand requests of a whole window each, and nothing reads
        # them back here: keep the last few only.
        server.requests = cast(list[RecordedRequest], deque(maxlen=16))
        print(server.url + "/v1", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
