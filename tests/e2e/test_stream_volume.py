"""Volume: a 100,000-token answer (one server-sent event per token) streamed at once by a local
model, through the real sidecar subprocess, arrives whole and in order, coalesced into far
fewer events than tokens.
Correctness only; the speed figures are `python -m bench stream`'s."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Sidecar, event_types
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

TOKENS = 100_000
# Words of a few characters with Unicode among them, one SSE event per token.
WORDS = ["the ", "río ", "日本 ", "😀 ", "wide\n", "ünïcödé "]


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
    )
    yield process
    await process.kill()


def _sse_body(pieces: list[str]) -> bytes:
    """An OpenAI chat completion stream with one SSE event per piece, sent in one write (the
    scripted server's own streaming writes each event apart: too slow for 100,000 of them)."""
    head = {"id": "chatcmpl-volume", "object": "chat.completion.chunk", "created": 1}
    head["model"] = "gpt-4o-mini"

    def event(delta: dict[str, str], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({**head, "choices": [choice]}).encode() + b"\n\n"

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": piece}) for piece in pieces]
    events += [event({}, "stop"), b"data: [DONE]\n\n"]
    return b"".join(events)


async def test_a_100k_token_answer_streams_through_the_sidecar_exactly_and_in_order(
    agent: Sidecar, model: ScriptedModelServer, sidecar_data: Path
) -> None:
    tokens = [f"{n} {WORDS[n % len(WORDS)]}" for n in range(TOKENS)]
    answer = "".join(tokens).strip()
    pieces = ["[[ ## answer ## ]]\n", *tokens, "\n\n[[ ## completed ## ]]"]
    model.push(Reply.raw(_sse_body(pieces), content_type="text/event-stream"))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "Stream a lot"})

    events = await agent.run_to_end(run["run_id"], within=240)

    assert event_types(events)[-1] == "run_finished"
    assert [e.seq for e in events] == list(range(len(events)))
    streamed = [e.event.text for e in events if e.event.type == "token"]  # type: ignore[union-attr]
    assert "".join(streamed) == answer
    assert len(streamed) < TOKENS // 10  # coalesced: one event per token would be 100,000
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["messages"][-1]["content"] == answer
    # The sidecar process froze its start-up heap once warm (sidecar.heap): a long stream's
    # garbage collections do not walk the imported libraries' objects.
    log = (sidecar_data / "logs" / "sidecar.log").read_text(encoding="utf-8")
    assert "start-up heap frozen" in log
