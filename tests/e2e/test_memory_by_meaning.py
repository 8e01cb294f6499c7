"""Memories found by meaning, through the real sidecar: with an embedding model configured (the
scripted server's `/v1/embeddings`, whose vectors put "editor" and "publisher" together), a
memory that shares no word with the new message still reaches the prompt; without one, or when
the embedding request fails, the turn goes on with word matches only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Sidecar
from tests.e2e.test_memory import model, prompt_of, start, turn
from tests.fakes.model_server import ScriptedModelServer

pytestmark = pytest.mark.anyio

__all__ = ["model"]  # the fixture, shared with the memory tests

FACT = "Zofia Quintanilla-Brandt publishes our series."
QUESTION = "Who is the editor?"  # no word in common with FACT
NEWER = [f"The harbour scene {n} needs more gulls." for n in range(12)]


async def _planted(agent: Sidecar) -> str:
    thread = (await agent.call("thread/create", {}))["id"]
    for text in [FACT, *NEWER]:  # the fact is not among the most recent memories
        await agent.call("memory/write", {"thread_id": thread, "tier": "workspace", "text": text})
    return thread


def _memory_items(events: list[Any]) -> dict[str, str]:
    [context] = [e.event for e in events if e.event.type == "context"]
    return {i.label: i.reason for i in context.items if i.kind == "memory"}


async def test_a_memory_close_in_meaning_reaches_the_prompt(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await start(
        sidecar_data,
        workspace,
        model,
        ATRIUM_EMBEDDING_MODEL="openai/text-embedding-3-small",
    )
    try:
        thread = await _planted(agent)
        before = len(model.generation_requests)
        events = await turn(agent, thread, QUESTION)
        assert FACT in prompt_of(model.generation_requests[before])
        assert _memory_items(events)[FACT] == "close in meaning to the new message"
        # Every memory of the scope got its vector on the way (13 fit one request).
        stored = await agent.call("memory/list", {"thread_id": thread})
        assert len(stored["memories"]) == 1 + len(NEWER)
    finally:
        await agent.kill()


async def test_without_an_embedding_model_only_words_and_recency_find_memories(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await start(sidecar_data, workspace, model)
    try:
        thread = await _planted(agent)
        before = len(model.generation_requests)
        events = await turn(agent, thread, QUESTION)
        assert FACT not in prompt_of(model.generation_requests[before])
        assert FACT not in _memory_items(events)
    finally:
        await agent.kill()


async def test_a_failing_embedding_model_costs_only_the_search_by_meaning(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    # An embedding model nobody serves: the connection is refused.
    agent = await start(
        sidecar_data,
        workspace,
        model,
        ATRIUM_EMBEDDING_MODEL="openai/text-embedding-3-small",
        ATRIUM_EMBEDDING_API_BASE="http://127.0.0.1:9/v1",
    )
    try:
        thread = await _planted(agent)
        events = await turn(agent, thread, QUESTION)
        assert FACT not in _memory_items(events)
        log = (sidecar_data / "logs" / "sidecar.log").read_text(encoding="utf-8")
        assert "finding memories by meaning failed" in log
    finally:
        await agent.kill()
