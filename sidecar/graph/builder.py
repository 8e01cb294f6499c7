# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false
# (langgraph.graph ships no stubs and its add_node overloads carry an unparameterised CachePolicy)
"""Build the main graph. The edges are the loop: no hand-coded tool sequences.

START → context → planner; planner → tool | dispatch | interrupt | persist;
tool and interrupt → planner; dispatch → planner, or fans out with `Send` to one `subagent`
per open task, whose results join back in dispatch; persist → END.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from sidecar.graph.deps import GraphDeps
from sidecar.graph.nodes.ask import make_interrupt
from sidecar.graph.nodes.context import make_context
from sidecar.graph.nodes.dispatch import make_dispatch, make_fan_out, make_subagent
from sidecar.graph.nodes.persist import make_persist
from sidecar.graph.nodes.planner import make_planner
from sidecar.graph.nodes.tool import make_tool
from sidecar.turn.compiled import TurnGraph
from sidecar.turn.events import traced
from sidecar.turn.state import Route, TurnState

NODES = ("context", "planner", "tool", "dispatch", "subagent", "interrupt", "persist")


def _route(state: TurnState) -> Route:
    return state.get("route") or "persist"


def build_graph(deps: GraphDeps) -> StateGraph[TurnState]:
    """The uncompiled main graph; compile it with the runtime's checkpointer."""
    graph = StateGraph(TurnState)
    graph.add_node("context", traced("context", make_context(deps)))
    graph.add_node("planner", traced("planner", make_planner(deps)))
    graph.add_node("tool", traced("tool", make_tool(deps)))
    graph.add_node("dispatch", traced("dispatch", make_dispatch(deps)))
    graph.add_node("subagent", make_subagent(deps))
    graph.add_node("interrupt", traced("interrupt", make_interrupt(deps)))
    graph.add_node("persist", traced("persist", make_persist(deps)))
    graph.add_edge(START, "context")
    graph.add_edge("context", "planner")
    graph.add_conditional_edges(
        "planner",
        _route,
        {"tool": "tool", "dispatch": "dispatch", "interrupt": "interrupt", "persist": "persist"},
    )
    for node in ("tool", "interrupt"):
        graph.add_edge(node, "planner")
    graph.add_conditional_edges("dispatch", make_fan_out(deps), ["subagent", "dispatch", "planner"])
    graph.add_edge("subagent", "dispatch")
    graph.add_edge("persist", END)
    return graph


def compile_graph(deps: GraphDeps, saver: BaseCheckpointSaver[str]) -> TurnGraph:
    """The main graph compiled on `saver`, handed to `deps.compiled` for subagents too."""
    graph: TurnGraph = build_graph(deps).compile(checkpointer=saver)
    deps.compiled.set(graph, saver)
    return graph
