"""What the nodes need from the world, handed to the builder (no globals)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sidecar.host.host import ToolHost
from sidecar.llm.types import Planner
from sidecar.store import Store


@dataclass(frozen=True, slots=True)
class GraphDeps:
    store: Store
    host: ToolHost
    planner: Callable[[], Planner | None]
    how_to_configure: Callable[[], str]
    context_messages: int = 30
