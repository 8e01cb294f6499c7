"""Compaction in a long thread: the real sidecar, a small token budget and a scripted model that
summarizes when asked. Pinned items must reach every prompt byte-exact; every summary names its
range; no message leaves the database."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

TURNS = 200
AGENT_MD = "# House rules\n\nAlways call the river *the Wend*.\nNever rename chapters.  \n\n"
PINNED = "The heroine's name is Orla Vance; never change it."
FILLER = "The harbour scene needs more light, more gulls and a colder wind. " * 4


def is_compaction(request: RecordedRequest) -> bool:
    return "You are compacting" in json.dumps(request.body["messages"])


def responder(request: RecordedRequest) -> Reply:
    if is_compaction(request):
        return Reply.text(
            answer_text("MEMORIES:\n- [thread] The harbour needs gulls.\nSUMMARY:\nThey revised.")
        )
    return Reply.text(answer_text("Understood. " + FILLER))


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server(fallback=responder) as server:
        yield server


async def test_two_hundred_turns_on_a_small_budget_compact_and_keep_pinned_items_byte_exact(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    (workspace / ".atrium").mkdir()
    (workspace / ".atrium" / "AGENT.md").write_bytes(AGENT_MD.encode())
    agent = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        ATRIUM_CONTEXT_TOKENS="3000",
    )
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread = (await agent.call("thread/create", {}))["id"]
        await agent.call(
            "memory/write", {"thread_id": thread, "tier": "thread", "text": PINNED, "pinned": True}
        )
        compactions = 0
        for n in range(TURNS):
            run = await agent.call(
                "run/start", {"thread_id": thread, "text": f"Turn {n}: {FILLER}"}
            )
            events = await agent.run_to_end(run["run_id"], within=240)
            assert event_types(events)[-1] == "run_finished"
            context = next(e.event for e in events if e.event.type == "context")
            assert context.used <= context.budget  # type: ignore[union-attr]
            if context.compaction is not None and context.compaction.performed:  # type: ignore[union-attr]
                compactions += 1
        turn_prompts = [r for r in model.generation_requests if not is_compaction(r)]
        assert len(turn_prompts) == TURNS
        for request in turn_prompts:
            sent = [m.get("content") or "" for m in request.body["messages"]]
            assert any(AGENT_MD in text for text in sent)  # byte-exact, whitespace and all
            assert any(PINNED in text for text in sent)
        assert compactions >= 3
        state = await agent.call("thread/compaction", {"thread_id": thread})
        summaries = state["summaries"]
        assert len(summaries) == compactions
        for before, after in itertools.pairwise(summaries):
            assert after["from_seq"] <= before["to_seq"] + 1 and after["to_seq"] > before["to_seq"]
        last = summaries[-1]
        final = model.generation_requests[-1]
        assert f"#{last['from_seq']}-#{last['to_seq']}" in json.dumps(final.body["messages"])
    finally:
        await agent.kill()
    conn = sqlite3.connect(sidecar_data / "atrium.db")
    try:
        counted = conn.execute(
            "SELECT role, COUNT(*) FROM messages WHERE thread_id = ? GROUP BY role", (thread,)
        ).fetchall()
        flushed = conn.execute(
            "SELECT COUNT(*) FROM store WHERE prefix GLOB 'memory.thread.*'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert dict(counted) == {"user": TURNS, "assistant": TURNS}
    assert flushed >= 2  # the pinned memory and what the flush saved


async def _agent(sidecar_data: Path, workspace: Path, model: ScriptedModelServer) -> Sidecar:
    agent = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        ATRIUM_CONTEXT_TOKENS="3000",
    )
    await agent.call("initialize", {"client_name": "tests"})
    return agent


async def test_compact_now_summarizes_at_once_even_with_automatic_compaction_off(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await _agent(sidecar_data, workspace, model)
    try:
        thread = (await agent.call("thread/create", {}))["id"]
        await agent.call("thread/compaction", {"thread_id": thread, "mode": "off"})
        for n in range(12):
            run = await agent.call("run/start", {"thread_id": thread, "text": f"T{n} {FILLER}"})
            assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
        assert not any(is_compaction(r) for r in model.generation_requests)

        # From the Memory panel's request: a `/compact` turn starts at once on the idle thread.
        before = len(agent.events)
        await agent.call("thread/compaction", {"thread_id": thread, "compact_now": True})
        await agent.wait_for(
            lambda evs: any(e.event.type == "run_finished" for e in evs[before:]), within=120
        )
        [performed] = _summaries_seen(agent.events[before:])
        state = await agent.call("thread/compaction", {"thread_id": thread})
        [summary] = state["summaries"]
        assert (summary["from_seq"], summary["to_seq"]) == (
            performed.from_seq,
            performed.to_seq,
        )
        messages = (await agent.call("thread/get", {"thread_id": thread}))["messages"]
        assert messages[-2]["content"] == "/compact"
        assert messages[-1]["content"].startswith(f"Summarized {summary['messages']} earlier")
        assert state["mode"] == "off"  # the thread's setting is left as it was
        assert sum(is_compaction(r) for r in model.generation_requests) == 1
    finally:
        await agent.kill()


def _summaries_seen(events: list[RunEventParams]) -> list[Any]:
    return [
        e.event.compaction  # type: ignore[union-attr]
        for e in events
        if e.event.type == "context"
        and e.event.compaction is not None  # type: ignore[union-attr]
        and e.event.compaction.performed  # type: ignore[union-attr]
    ]


async def test_compact_typed_without_a_model_says_why_nothing_was_summarized(
    sidecar_data: Path, workspace: Path
) -> None:
    agent = await Sidecar.start(sidecar_data, workspace)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread = (await agent.call("thread/create", {}))["id"]
        run = await agent.call("run/start", {"thread_id": thread, "text": "/compact"})
        assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
        messages = (await agent.call("thread/get", {"thread_id": thread}))["messages"]
        assert messages[-1]["content"].startswith("Nothing was summarized: no model is configured")
    finally:
        await agent.kill()
