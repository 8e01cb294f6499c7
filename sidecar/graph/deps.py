"""What the nodes need from the world, handed to the builder (no globals)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.coord.coordinator import Coordinator
from sidecar.coord.profiles import DEFAULT_PROFILES, Profile
from sidecar.graph.memory.parts import MemoryDeps
from sidecar.host.host import ToolHost
from sidecar.llm.embeddings import Embedder
from sidecar.llm.types import Planner
from sidecar.store import Store


class CompiledRef:
    """The compiled graph and its saver, set once compiled: subagents run the same graph on
    their own sub-threads."""

    def __init__(self) -> None:
        self._value: tuple[Any, Any] | None = None

    def set(self, graph: Any, saver: Any) -> None:
        self._value = (graph, saver)

    def get(self) -> tuple[Any, Any]:
        if self._value is None:
            raise RuntimeError("the graph is not compiled yet")
        return self._value


def _default_profiles() -> dict[str, Profile]:
    return {p.id: p for p in DEFAULT_PROFILES}


@dataclass(frozen=True, slots=True)
class GraphDeps:
    store: Store
    host: ToolHost
    planner: Callable[[], Planner | None]
    how_to_configure: Callable[[], str]
    context_messages: int = 30
    profiles: Callable[[], dict[str, Profile]] = _default_profiles
    coordinator: Coordinator = field(default_factory=Coordinator)
    compiled: CompiledRef = field(default_factory=CompiledRef)
    workspace: Callable[[], Path] = Path.cwd
    data_dir: Path = field(default_factory=Path.cwd)
    planner_for: Callable[[str], Planner | None] | None = None
    memory: MemoryDeps | None = None
    # The author's messages queued in steer mode for this thread's running turn, delivered
    # (written to the conversation) as they are taken; the planner reads them before each step.
    steering: Callable[[str, str | None, Collection[str]], list[tuple[str, str]]] | None = None
    # The configured embedding model (None: memories are found by their words only).
    embedder: Callable[[], Embedder | None] | None = None
    # A slot of a runtime lane by name (`subagent` for the tasks a turn hands off).
    lane: Callable[[str], AbstractAsyncContextManager[None]] | None = None
