"""Memory vectors: one embedding per memory and model, beside the memory rows they index.

A vector is stale when the memory's row changed since it was computed (`updated_at` and the
length of its value). Nearest memories: with sqlite-vec loaded into the connection, SQLite
ranks by `vec_distance_cosine`; where this Python's sqlite3 cannot load extensions (some builds
lack `enable_load_extension`), the scope's vectors are read and ranked with numpy. Vectors are
normalized, so both orders are the same. A forgotten memory's vector is never returned (the
query joins the memory rows).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.store.repository import Repository

log = logging.getLogger(__name__)

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
class StaleMemory:
    """A memory whose vector for a model is missing or out of date, with its text."""

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


class VectorRepo(Repository):
    """The vectors of the memories on the same connection (its `memory_vectors` table joins
    the memory store's `store` rows). Built by `sidecar.store.libraries.open_vectors`, which
    makes the table first."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.uses_sqlite_vec = _load_sqlite_vec(conn)

    def stale(self, prefixes: Sequence[str], model: str, limit: int) -> list[StaleMemory]:
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
        found: list[StaleMemory] = []
        for prefix, key, version, value in rows:
            text = json.loads(value).get("text") if isinstance(value, str | bytes) else None
            if isinstance(text, str) and text.strip():
                found.append(StaleMemory(prefix, key, version, text))
        return found

    def save(self, model: str, items: Sequence[StaleMemory], vectors: Sequence[bytes]) -> None:
        self.conn.executemany(
            "INSERT INTO memory_vectors(prefix, key, model, version, vector) VALUES (?,?,?,?,?)"
            " ON CONFLICT(prefix, key, model) DO UPDATE SET version = excluded.version,"
            " vector = excluded.vector",
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
