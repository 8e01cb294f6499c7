"""Memory across turns, threads and workspaces: the real sidecar with a scripted model on
127.0.0.1 whose requests (the prompts) are recorded."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.context.render import mark_data
from tests.e2e.harness import Sidecar, event_types
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

# A loaded machine and the model client's retry backoff make a turn slow; wait generously.
WAIT_S = 240
FACT = "The author's editor is Zofia Quintanilla-Brandt; the manuscript is due March 3."
# 1,000 input tokens, 500 of them for recent messages: about 40 of this test's short messages.
SMALL_WINDOW = "2000"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server(fallback=Reply.text(answer_text("Noted."))) as server:
        yield server


def model_env(model: ScriptedModelServer, **extra: str) -> dict[str, str]:
    return {
        "ATRIUM_MODEL": "openai/gpt-4o-mini",
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
        **extra,
    }


async def start(data: Path, workspace: Path, model: ScriptedModelServer, **extra: str) -> Sidecar:
    process = await Sidecar.start(data, workspace, **model_env(model, **extra))
    await process.call("initialize", {"client_name": "tests"})
    return process


def prompt_of(request: RecordedRequest) -> str:
    """Everything the model was sent, as one text."""
    return json.dumps(request.body["messages"], ensure_ascii=False)


async def turn(agent: Sidecar, thread_id: str, text: str) -> list[Any]:
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    events = await agent.run_to_end(run["run_id"], within=WAIT_S)
    assert event_types(events)[-1] == "run_finished", event_types(events)
    return events


def memory_write(text: str, tier: str) -> Reply:
    return Reply.tool_call("memory__write", {"text": text, "tier": tier})


def turn_request(model: ScriptedModelServer, since: int) -> RecordedRequest:
    """The first request of the turn that began after `since` requests (a compaction request
    before it is not the turn's)."""
    return next(r for r in model.generation_requests[since:] if not is_compaction(r))


def is_compaction(request: RecordedRequest) -> bool:
    return "You are compacting" in prompt_of(request)


def remembered(request: RecordedRequest, key: str, tier: str, text: str) -> bool:
    """Whether the prompt's memory section holds the memory `key`, marked as memory data."""
    block = mark_data("memory", f"- [{key}] ({tier}) {text}")
    section = f"Memories that may help (saved earlier):\n{block}"
    return any(section in (m.get("content") or "") for m in request.body["messages"])


async def test_a_fact_from_turn_one_is_in_the_prompt_at_turn_46_and_in_a_new_thread(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    # A small window: at turn 46 the first turns are long out of the recent messages (and
    # summarized), so only memory can bring the fact back.
    agent = await start(sidecar_data, workspace, model, ATRIUM_CONTEXT_TOKENS=SMALL_WINDOW)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        model.push(memory_write(FACT, "workspace"), Reply.text(answer_text("Noted.")))
        events = await turn(
            agent, thread, "Remember: my editor is Zofia Quintanilla-Brandt, due March 3."
        )
        saved = [e.event for e in events if e.event.type == "memory"]
        assert [(m.action, m.memory.tier) for m in saved] == [("saved", "workspace")]  # type: ignore[union-attr]
        key = saved[0].key  # type: ignore[union-attr]
        first_turn = len((await agent.call("thread/get", {"thread_id": thread}))["messages"])
        for n in range(2, 46):
            await turn(agent, thread, f"Let us talk about the harbour scene, part {n}.")
        before = len(model.generation_requests)
        events = await turn(agent, thread, "Who is my editor again?")
        assert remembered(turn_request(model, before), key, "workspace", FACT)
        context = next(e.event for e in events if e.event.type == "context")
        assert context.window == int(SMALL_WINDOW) and context.left_out_messages > 0  # type: ignore[union-attr]
        assert ("memory", key, True) in {(i.kind, i.ref, i.included) for i in context.items}  # type: ignore[union-attr]
        summaries = (await agent.call("thread/compaction", {"thread_id": thread}))["summaries"]
        # The whole first turn (messages #1 to #first_turn) is summarized: none of it is among
        # the recent messages.
        assert summaries[-1]["from_seq"] == 1 and summaries[-1]["to_seq"] >= first_turn
        usage = await agent.call("thread/usage", {"thread_id": thread})
        assert len(usage["turns"]) == 46 and usage["prompt_tokens"] > 0 and usage["cost"] > 0
        exported = await agent.call("thread/export", {"thread_id": thread, "format": "markdown"})
        assert "| total |" in exported["content"]
        other = (await agent.call("thread/create", {}))["id"]
        before = len(model.generation_requests)
        events = await turn(agent, other, "Who edits my manuscript?")
        assert remembered(turn_request(model, before), key, "workspace", FACT)
        context = next(e.event for e in events if e.event.type == "context")
        kinds = {(i.kind, i.included) for i in context.items}  # type: ignore[union-attr]
        assert ("memory", True) in kinds
    finally:
        await agent.kill()


async def test_tiers_keep_to_their_scope_across_threads_and_workspaces(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer, tmp_path: Path
) -> None:
    agent = await start(sidecar_data, workspace, model)
    try:
        first = (await agent.call("thread/create", {}))["id"]
        model.push(
            memory_write("The dragon is called Ember.", "thread"),
            memory_write("The author takes tea without sugar.", "account"),
            memory_write("The river novel is set in 1890.", "workspace"),
            Reply.text(answer_text("Saved.")),
        )
        await turn(agent, first, "Remember the dragon, my tea and the year.")
        second = (await agent.call("thread/create", {}))["id"]
        before = len(model.generation_requests)
        await turn(agent, second, "What is the dragon called? How do I take tea? Which year?")
        prompt = prompt_of(model.generation_requests[before])
        assert "Ember" not in prompt
        assert "tea without sugar" in prompt and "1890" in prompt
    finally:
        await agent.kill()
    elsewhere = tmp_path / "other-workspace"
    elsewhere.mkdir()
    agent = await start(sidecar_data, elsewhere, model)
    try:
        third = (await agent.call("thread/create", {}))["id"]
        before = len(model.generation_requests)
        await turn(agent, third, "How do I take my tea, and which year is the novel set in?")
        prompt = prompt_of(model.generation_requests[before])
        assert "tea without sugar" in prompt
        assert "1890" not in prompt
    finally:
        await agent.kill()


def _memories(data: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(data / "atrium.db")
    try:
        rows = conn.execute("SELECT value FROM store WHERE prefix GLOB 'memory.*'").fetchall()
    finally:
        conn.close()
    return [json.loads(r[0]) for r in rows]


async def test_a_staged_memory_is_written_once_by_the_resumed_turn_after_a_kill(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    release = threading.Event()
    agent = await start(sidecar_data, workspace, model)
    thread = (await agent.call("thread/create", {}))["id"]
    model.push(memory_write(FACT, "account"), Reply.hang(release))
    await agent.call("run/start", {"thread_id": thread, "text": "Remember my editor."})
    model.wait_for_generations(2, timeout=WAIT_S)
    await agent.kill()
    release.set()
    assert _memories(sidecar_data) == []  # staged, not written: the turn never ended
    model.push(Reply.text(answer_text("Saved it.")))
    agent = await start(sidecar_data, workspace, model)
    try:
        retried = await agent.call("run/retry", {"thread_id": thread})
        events = await agent.run_to_end(retried["run_id"], within=WAIT_S)
        assert event_types(events)[-1] == "run_finished"
        saved = _memories(sidecar_data)
        assert [m["text"] for m in saved] == [FACT]
        assert saved[0]["source_thread"] == thread and saved[0]["by"] == "agent"
        assert saved[0]["source_message"].endswith(":user")
    finally:
        await agent.kill()


async def test_a_failed_turn_writes_no_memory_and_a_forged_source_is_refused(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, workspace, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        model.push(
            Reply.tool_call(
                "memory__write", {"text": "forged", "tier": "thread", "source_message": "nope"}
            ),
            memory_write("A half memory.", "thread"),
            Reply.error(500),
            Reply.error(500),
        )
        run = await agent.call("run/start", {"thread_id": thread, "text": "Save things."})
        events = await agent.run_to_end(run["run_id"], within=WAIT_S)
        assert event_types(events)[-1] == "run_failed"
        results = [e.event for e in events if e.event.type == "tool_result"]
        assert results[0].is_error and "forged_source" in results[0].content  # type: ignore[union-attr]
        assert _memories(sidecar_data) == []
    finally:
        await agent.kill()


async def test_a_turn_cancelled_after_staging_a_memory_writes_none_and_the_next_turn_works(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    release = threading.Event()
    agent = await start(sidecar_data, workspace, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        model.push(memory_write(FACT, "account"), Reply.hang(release))
        run = await agent.call("run/start", {"thread_id": thread, "text": "Remember my editor."})
        # The second model request means the write was staged and answered.
        await asyncio.to_thread(model.wait_for_generations, 2, WAIT_S)
        await agent.call("run/cancel", {"thread_id": thread})
        events = await agent.run_to_end(run["run_id"], within=WAIT_S)
        assert event_types(events)[-1] == "run_cancelled"
        [staged] = [e.event for e in events if e.event.type == "tool_result"]
        assert not staged.is_error  # type: ignore[union-attr]
        assert "memory" not in event_types(events)
        assert _memories(sidecar_data) == []
        release.set()

        before = len(model.generation_requests)
        model.push(Reply.text(answer_text("Your editor? You have not told me.")))
        events = await turn(agent, thread, "Who is my editor?")
        assert "memory" not in event_types(events)
        assert "Zofia" not in prompt_of(turn_request(model, before))
        assert _memories(sidecar_data) == []
        assert (await agent.call("memory/list", {"thread_id": thread}))["memories"] == []
        assert (await agent.call("thread/get", {"thread_id": thread}))["status"] == "idle"
    finally:
        release.set()
        await agent.kill()
