"""The real sidecar with an `anthropic/` model: DSPy → the coalescing Anthropic engine → a
scripted Anthropic Messages server on 127.0.0.1. A tool call round trip with a streamed answer,
and a rejected key."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.e2e.harness import Sidecar, event_types
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with anthropic_server() as server:
        yield server


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_MODEL="anthropic/claude-sonnet-4-6",
        ATRIUM_MODEL_API_BASE=model.url,
        ATRIUM_MODEL_API_KEY="sk-ant-scripted",
    )
    result = await process.call("initialize", {"client_name": "tests"})
    assert result["model_configured"] is True
    yield process
    await process.kill()


async def test_the_model_reads_a_file_and_its_answer_streams_in_tokens(
    agent: Sidecar, model: ScriptedModelServer
):
    answer = "Your notes say the river is wide — «très» wide 🌊, and that is all they say."
    model.push(
        Reply.tool_call("workspace__read", {"path": "notes.md"}, id="toolu_read1"),
        # Pauses far longer than the coalescing window: the answer arrives in several events.
        Reply.text(answer_text(answer), chunk_size=24, chunk_delay=0.6),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "What do my notes say?"}
    )
    events = await agent.run_to_end(run["run_id"])
    types = event_types(events)
    assert types[-1] == "run_finished" and "interrupt" not in types
    tokens = [e.event.text for e in events if e.event.type == "token"]  # type: ignore[union-attr]
    assert len(tokens) > 1 and "".join(tokens).strip() == answer

    first, second = model.generation_requests[:2]
    assert first.path == "/v1/messages" and first.body["stream"] is True
    assert any(t["name"] == "workspace__read" for t in first.body["tools"])
    results = [
        block
        for message in second.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == ["toolu_read1"]
    assert "the river is wide" in str(results[0]["content"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["messages"][-1]["role"] == "assistant"
    assert got["messages"][-1]["content"].strip() == answer


async def test_a_rejected_key_fails_the_run_with_the_one_line_auth_error(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(Reply.error(401), Reply.error(401), Reply.error(401))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "hello"})
    events = await agent.run_to_end(run["run_id"])
    failed = events[-1].event
    assert failed.type == "run_failed"
    assert failed.error.code == "auth"  # type: ignore[union-attr]
    assert failed.error.message == (  # type: ignore[union-attr]
        "The model provider rejected the API key: check the key in Settings → Model"
    )
