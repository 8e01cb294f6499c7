"""The memory parts the graph works with: the tiers, the context records, the window."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_servers.memory import MemoryStore
from sidecar.context.assemble import RecentCache, Sources
from sidecar.store import Store
from sidecar.store.context import ContextRepo
from sidecar.store.libraries import open_vectors
from sidecar.store.vectors import VectorRepo


@dataclass(frozen=True, slots=True)
class MemoryDeps:
    """The memory tiers, the context records, and the configured window (None: the model's)."""

    memory: MemoryStore
    contexts: ContextRepo
    window: int | None = None

    recent: RecentCache = field(default_factory=RecentCache)
    _vectors: list[VectorRepo] = field(default_factory=list[VectorRepo])

    def sources(self, store: Store) -> Sources:
        return Sources(store, self.memory, self.contexts, self.recent)

    def vectors(self) -> VectorRepo:
        """The memories' vectors (their table is made on first use: only with an embedding
        model configured)."""
        if not self._vectors:
            self._vectors.append(open_vectors(self.memory))
        return self._vectors[0]


def build_memory_deps(store: Store, window: int | None = None) -> MemoryDeps:
    return MemoryDeps(store.open_memory(), store.contexts, window)
