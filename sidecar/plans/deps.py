"""What plans need from the world to run their tasks, handed down by the graph (no globals)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sidecar.host.host import ToolHost
from sidecar.llm.types import Planner
from sidecar.plans.coordinator import Coordinator
from sidecar.plans.profiles import DEFAULT_PROFILES, Profile
from sidecar.store import Store
from sidecar.turn.compiled import CompiledTurn

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from sidecar.turn.compiled import TurnGraph


class CompiledRef:
    """The compiled graph and its saver, set once compiled: subagents run the same graph on
    their own sub-threads."""

    def __init__(self) -> None:
        self._value: CompiledTurn | None = None

    def set(self, graph: TurnGraph, saver: BaseCheckpointSaver[str]) -> None:
        self._value = CompiledTurn(graph, saver)

    def get(self) -> CompiledTurn:
        """Raises:
        RuntimeError: the graph is not compiled yet."""
        if self._value is None:
            raise RuntimeError("the graph is not compiled yet")
        return self._value


def _default_profiles() -> dict[str, Profile]:
    return {p.id: p for p in DEFAULT_PROFILES}


def _unlimited_slot(lane: str) -> AbstractAsyncContextManager[None]:
    """A lane without a cap: a task waits only for its profile's slot."""
    del lane
    return nullcontext()


@dataclass(frozen=True, slots=True)
class PlanDeps:
    """The store, the host, the models and the coordinator a plan's tasks run with. The graph's
    `GraphDeps` extends it with what only the main graph's nodes need (memory, steering,
    the background desk)."""

    store: Store
    host: ToolHost
    planner: Callable[[], Planner | None]
    how_to_configure: Callable[[], str]
    profiles: Callable[[], dict[str, Profile]] = _default_profiles
    coordinator: Coordinator = field(default_factory=Coordinator)
    compiled: CompiledRef = field(default_factory=CompiledRef)
    workspace: Callable[[], Path] = Path.cwd
    data_dir: Path = field(default_factory=Path.cwd)
    # A slot of a runtime lane by name (`subagent` for the tasks a turn hands off).
    lane: Callable[[str], AbstractAsyncContextManager[None]] = _unlimited_slot
    # A planner on another model (a subagent profile's), same endpoint and key; None: no model
    # is configured.
    planner_for: Callable[[str], Planner | None] = field(kw_only=True)
