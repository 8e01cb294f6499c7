"""What the nodes need from the world, handed to the builder (no globals)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field

from sidecar.context.parts import MemoryDeps
from sidecar.llm.embeddings import Embedder
from sidecar.plans.deps import CompiledRef, PlanDeps

__all__ = ["CompiledRef", "GraphDeps"]


def _no_embedder() -> Embedder | None:
    """No embedding model is configured: memories are found by their words only."""
    return None


@dataclass(frozen=True, slots=True)
class GraphDeps(PlanDeps):
    """`PlanDeps` (what the plans wing needs) plus what the context, planner and dispatch nodes
    need."""

    context_messages: int = 30
    # The configured embedding model (None: memories are found by their words only).
    embedder: Callable[[], Embedder | None] = _no_embedder
    memory: MemoryDeps = field(kw_only=True)
    # The author's messages queued in steer mode for this thread's running turn, delivered
    # (written to the conversation) as they are taken; the planner reads them before each step.
    steering: Callable[[str, str | None, Collection[str]], list[tuple[str, str]]] = field(
        kw_only=True
    )
    # Runs an approved plan of the author's thread in the background: (thread id, plan id) →
    # the background run's id. A subagent's own plans run inside its task instead (it waits
    # for them).
    background: Callable[[str, str], str] = field(kw_only=True)
    # Stops a background plan's work where it is (plan id), to be taken up by `background`:
    # a revision of a running plan waits with it stopped until the author decides.
    pause_background: Callable[[str], Awaitable[None]] = field(kw_only=True)
