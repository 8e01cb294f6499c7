"""Memories found by meaning: one embedding per memory and model, in the one database.

Only when the author configures an embedding model (`sidecar.llm.embeddings`); full-text search
works without it. Vectors are filled in lazily: each turn embeds its new message together with
up to `STALE_PER_TURN` memories of its scope that have no vector for the model yet (or whose
row changed since), so nothing has to hook the memory writers, and a thousand old memories are
indexed over the next turns without one long pause. The vectors' table and how the nearest are
ranked (sqlite-vec, or numpy where it cannot load) are the store's (`sidecar.store.vectors`). A
forgotten memory's vector is never returned (the query joins the memory rows).
"""

from __future__ import annotations

from mcp_servers.memory import Memory, MemoryRefusal, MemoryStore, Scope
from sidecar.llm.embeddings import Embedder
from sidecar.store.vectors import VectorRepo

STALE_PER_TURN = 63
"""Memories embedded alongside one turn's message (one request of 64 texts)."""

SIMILARITY_FLOOR = 0.3
"""Cosine similarity below which a memory is not offered as close in meaning (normalized
embeddings of unrelated texts score well below it, related ones above)."""


async def similar_memories(
    index: VectorRepo,
    embedder: Embedder,
    memory: MemoryStore,
    scope: Scope,
    text: str,
    *,
    limit: int,
    floor: float = SIMILARITY_FLOOR,
) -> list[tuple[Memory, float]]:
    """The memories of `scope` closest in meaning to `text`, best first (each with its cosine
    similarity, at least `floor`); stale vectors of the scope are refreshed on the way.

    Raises:
        Exception: whatever the embedding request raised.
    """
    prefixes = list(scope.prefixes())
    stale = index.stale(prefixes, embedder.model, STALE_PER_TURN)
    vectors = await embedder.embed([text, *(s.text for s in stale)])
    index.save(embedder.model, stale, vectors[1:])
    found: list[tuple[Memory, float]] = []
    for key, similarity in index.nearest(prefixes, embedder.model, vectors[0], limit):
        if similarity < floor:
            break
        try:
            found.append((memory.visible(key, scope), similarity))
        except MemoryRefusal:
            continue
    return found
