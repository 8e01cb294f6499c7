"""Memories found by meaning: one embedding per memory and model, in the one database.

Only when the author configures an embedding model (`sidecar.llm.embeddings`); full-text search
works without it. Vectors are filled in lazily: each turn embeds its new message together with
up to `STALE_PER_TURN` memories of its scope that have no vector for the model yet (or whose
row changed since), so nothing has to hook the memory writers, and a thousand old memories are
indexed over the next turns without one long pause. A vector is stale when the memory's row
changed (`updated_at` and the length of its value).

Nearest memories: with sqlite-vec loaded into the connection, SQLite ranks by
`vec_distance_cosine`; where this Python's sqlite3 cannot load extensions (some builds lack
`enable_load_extension`), the scope's vectors are read and ranked with numpy. Vectors are
normalized, so both orders are the same. A forgotten memory's vector is never returned (the
query joins the memory rows) and is dropped when met.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_servers.memory import Memory, MemoryRefusal, MemoryStore, Scope
from sidecar.llm.embeddings import Embedder

log = logging.getLogger(__name__)

STALE_PER_TURN = 63
"""Memories embedded alongside one turn's message (one request of 64 texts)."""

SIMILARITY_FLOOR = 0.3
"""Cosine similarity below which a memory is not offered as close in meaning (normalized
embeddings of unrelated texts score well below it, related ones above)."""

VECTOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_vectors (
    prefix TEXT NOT NULL,
    key TEXT NOT NULL,
    model TEXT NOT NULL,
    version TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (prefix, key, model)
) WITHOUT ROWID;
"""

_VERSION = "s.updated_at || ':' || length(s.value)"


@dataclass(frozen=True, slots=True)
class _Stale:
    prefix: str
    key: str
    version: str
    text: str


def _load_sqlite_vec(conn: sqlite3.Connection) -> bool:
    """True when sqlite-vec's functions are available on `conn`."""
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None:
        return False
    try:
        import sqlite_vec  # pyright: ignore[reportMissingTypeStubs]

        enable(True)
        try:
            sqlite_vec.load(conn)  # pyright: ignore[reportUnknownMemberType]
        finally:
            enable(False)
        conn.execute("SELECT vec_version()").fetchone()
    except Exception:
        log.info("sqlite-vec is not available; memories are ranked by meaning with numpy")
        return False
    return True


class VectorIndex:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.executescript(VECTOR_SCHEMA)
        self.uses_sqlite_vec = _load_sqlite_vec(conn)

    def stale(self, prefixes: Sequence[str], model: str, limit: int) -> list[_Stale]:
        """Memories of `prefixes` without a current vector for `model`, newest first."""
        if not prefixes:
            return []
        marks = ",".join("?" * len(prefixes))
        rows = self.conn.execute(
            f"SELECT s.prefix, s.key, {_VERSION} AS version, s.value FROM store s"
            " LEFT JOIN memory_vectors v"
            "  ON v.prefix = s.prefix AND v.key = s.key AND v.model = ?"
            f" WHERE s.prefix IN ({marks}) AND (v.key IS NULL OR v.version != {_VERSION})"
            " ORDER BY s.updated_at DESC LIMIT ?",
            (model, *prefixes, limit),
        ).fetchall()
        found: list[_Stale] = []
        for prefix, key, version, value in rows:
            text = json.loads(value).get("text") if isinstance(value, str | bytes) else None
            if isinstance(text, str) and text.strip():
                found.append(_Stale(prefix, key, version, text))
        return found

    def save(self, model: str, items: Sequence[_Stale], vectors: Sequence[bytes]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO memory_vectors(prefix, key, model, version, vector)"
            " VALUES (?,?,?,?,?)",
            [(i.prefix, i.key, model, i.version, v) for i, v in zip(items, vectors, strict=True)],
        )

    def nearest(
        self, prefixes: Sequence[str], model: str, query: bytes, limit: int
    ) -> list[tuple[str, float]]:
        """(key, cosine similarity) of the memories of `prefixes` closest to `query`."""
        if not prefixes:
            return []
        marks = ",".join("?" * len(prefixes))
        joined = (
            "FROM memory_vectors v JOIN store s ON s.prefix = v.prefix AND s.key = v.key"
            f" WHERE v.model = ? AND v.prefix IN ({marks})"
        )
        if self.uses_sqlite_vec:
            rows = self.conn.execute(
                f"SELECT v.key, 1 - vec_distance_cosine(v.vector, ?) AS similarity {joined}"
                " ORDER BY similarity DESC LIMIT ?",
                (query, model, *prefixes, limit),
            ).fetchall()
            return [(str(k), float(s)) for k, s in rows]
        import numpy as np

        rows = self.conn.execute(f"SELECT v.key, v.vector {joined}", (model, *prefixes)).fetchall()
        wanted = np.frombuffer(query, dtype=np.float32)
        usable: list[tuple[str, bytes]] = [
            (str(k), bytes(b)) for k, b in rows if len(b) == len(query)
        ]
        if not usable:
            return []
        matrix = np.frombuffer(b"".join(b for _, b in usable), dtype=np.float32)
        scores = matrix.reshape(len(usable), -1) @ wanted
        order = np.argsort(-scores)[:limit]
        return [(usable[int(i)][0], float(scores[int(i)])) for i in order]


async def similar_memories(
    index: VectorIndex,
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
