# pyright: reportMissingTypeStubs=false
# (langgraph.graph ships no stubs)
"""The compiled main graph and its checkpointer, as one typed pair.

The runtime drives turns on it and internal subagents run the same graph on their own
sub-threads; both receive it from the composition root once it is compiled. LangGraph is
imported for the types only, so naming the pair costs start-up nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypeAlias

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from sidecar.turn.state import TurnState

TurnGraph: TypeAlias = "CompiledStateGraph[TurnState, None, TurnState, TurnState]"


class CompiledTurn(NamedTuple):
    graph: TurnGraph
    saver: BaseCheckpointSaver[str]
