"""What the nodes need from the world, handed to the builder (no globals)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from sidecar.context.parts import MemoryDeps
from sidecar.llm.embeddings import Embedder
from sidecar.plans.deps import CompiledRef, PlanDeps

__all__ = ["CompiledRef", "GraphDeps"]


@dataclass(frozen=True, slots=True)
class GraphDeps(PlanDeps):
    """`PlanDeps` (what the plans wing needs) plus what the context and planner nodes need."""

    context_messages: int = 30
    memory: MemoryDeps | None = None
    # The author's messages queued in steer mode for this thread's running turn, delivered
    # (written to the conversation) as they are taken; the planner reads them before each step.
    steering: Callable[[str, str | None, Collection[str]], list[tuple[str, str]]] | None = None
    # The configured embedding model (None: memories are found by their words only).
    embedder: Callable[[], Embedder | None] | None = None
