"""Memories found by meaning: vectors filled in lazily, a turn at a time, through the real
embedding client against the scripted server's `/v1/embeddings` (its vectors put "editor" and
"publisher" together); forgotten and edited memories are never ranked on stale vectors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcp_servers.memory import Scope
from sidecar.context.parts import MemoryDeps, build_memory_deps
from sidecar.context.staging import scope_for
from sidecar.context.vectors import STALE_PER_TURN, similar_memories
from sidecar.llm.embeddings import Embedder, EmbeddingConfig, embedding_config
from sidecar.llm.planner import aclose_model_clients
from sidecar.llm.types import LMConfig
from sidecar.store import Store, open_database
from tests.fakes.model_server import ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

FACT = "Zofia Quintanilla-Brandt publishes our series."
QUESTION = "Who is the editor?"


@pytest.fixture
async def server() -> AsyncIterator[ScriptedModelServer]:
    with openai_chat_server() as running:
        yield running
        # LiteLLM caches its HTTP clients per loop: close them on this test's loop.
        await aclose_model_clients()


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[MemoryDeps, Scope]]:
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    thread = store.create_thread("t").id
    yield build_memory_deps(store), scope_for(thread, None, tmp_path)
    db.close()


def _embedder(server: ScriptedModelServer) -> Embedder:
    return Embedder(EmbeddingConfig("openai/text-embedding-3-small", server.url + "/v1", "x"))


async def test_three_thousand_memories_are_indexed_a_batch_a_turn_and_the_close_one_wins(
    server: ScriptedModelServer, parts: tuple[MemoryDeps, Scope]
) -> None:
    mem, scope = parts
    fact = mem.memory.write(scope, "workspace", FACT, by="author")
    for n in range(3000):
        mem.memory.write(scope, "workspace", f"The harbour scene {n} needs gulls.", by="author")
    embedder, index = _embedder(server), mem.vectors()
    prefixes = list(scope.prefixes())
    turns = 0
    while index.stale(prefixes, embedder.model, 1):
        await similar_memories(index, embedder, mem.memory, scope, QUESTION, limit=8)
        turns += 1
    assert turns == -(-3001 // STALE_PER_TURN)  # every memory, one batch per turn
    found = await similar_memories(index, embedder, mem.memory, scope, QUESTION, limit=8)
    assert [m.key for m, _ in found] == [fact.key]  # the rest are below the floor
    assert found[0][1] > 0.4


async def test_a_forgotten_memory_is_not_found_and_an_edited_one_is_embedded_again(
    server: ScriptedModelServer, parts: tuple[MemoryDeps, Scope]
) -> None:
    mem, scope = parts
    embedder, index = _embedder(server), mem.vectors()
    fact = mem.memory.write(scope, "workspace", FACT, by="author")
    other = mem.memory.write(scope, "workspace", "The lighthouse keeper is Ana.", by="author")
    found = await similar_memories(index, embedder, mem.memory, scope, QUESTION, limit=8)
    assert [m.key for m, _ in found] == [fact.key]
    mem.memory.forget(fact.key)
    assert await similar_memories(index, embedder, mem.memory, scope, QUESTION, limit=8) == []
    mem.memory.update(other.key, text="Ana, the lighthouse keeper, is also the editor now.")
    found = await similar_memories(index, embedder, mem.memory, scope, QUESTION, limit=8)
    assert [m.key for m, _ in found] == [other.key]


async def test_a_thread_memory_of_another_thread_is_never_offered(
    server: ScriptedModelServer, parts: tuple[MemoryDeps, Scope], tmp_path: Path
) -> None:
    mem, scope = parts
    elsewhere = scope_for("another-thread", None, tmp_path)
    mem.memory.write(elsewhere, "thread", FACT, by="author")
    found = await similar_memories(
        mem.vectors(), _embedder(server), mem.memory, scope, QUESTION, limit=8
    )
    assert found == []


def test_the_embedding_model_is_off_unless_named_and_borrows_the_chat_endpoint() -> None:
    chat = LMConfig("openai/gpt-4o-mini", "http://127.0.0.1:1/v1", "sk-chat")
    assert embedding_config({}, chat) is None
    assert embedding_config({"ATRIUM_EMBEDDING_MODEL": "  "}, chat) is None
    named = embedding_config({"ATRIUM_EMBEDDING_MODEL": "openai/text-embedding-3-small"}, chat)
    assert named == EmbeddingConfig(
        "openai/text-embedding-3-small", "http://127.0.0.1:1/v1", "sk-chat"
    )
    own = embedding_config(
        {
            "ATRIUM_EMBEDDING_MODEL": "ollama/nomic-embed-text",
            "ATRIUM_EMBEDDING_API_BASE": "http://127.0.0.1:2",
            "ATRIUM_EMBEDDING_API_KEY": "k",
        },
        None,
    )
    assert own == EmbeddingConfig("ollama/nomic-embed-text", "http://127.0.0.1:2", "k")
    assert "k" not in repr(own)
