"""The memory parts the graph works with: the tiers, the context records, the window."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from mcp_servers.memory import MemoryStore
from sidecar.context.assemble import RecentCache, Sources
from sidecar.context.vectors import VectorIndex
from sidecar.store import Store
from sidecar.store.context import ContextRepo


@dataclass(frozen=True, slots=True)
class MemoryDeps:
    """The memory tiers, the context records, and the configured window (None: the model's)."""

    memory: MemoryStore
    contexts: ContextRepo
    window: int | None = None

    recent: RecentCache = field(default_factory=RecentCache)
    _vectors: list[VectorIndex] = field(default_factory=list[VectorIndex])

    def sources(self, store: Store) -> Sources:
        return Sources(store, self.memory, self.contexts, self.recent)

    def vectors(self) -> VectorIndex:
        """The memories' vectors (their table is made on first use: only with an embedding
        model configured)."""
        if not self._vectors:
            self._vectors.append(VectorIndex(self.memory.conn))
        return self._vectors[0]


def build_memory_deps(store: Store, window: int | None = None) -> MemoryDeps:
    return MemoryDeps(open_memory(store.conn), ContextRepo(store.conn), window)


def open_memory(conn: sqlite3.Connection) -> MemoryStore:
    """The memory tiers in the one database: sources are checked against the thread's
    messages, and an agent's memory must name one."""

    def check(thread: str, message: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM messages WHERE id = ? AND thread_id = ?", (message, thread)
        ).fetchone()
        return row is not None

    return MemoryStore(conn, source_check=check, require_source=True)
