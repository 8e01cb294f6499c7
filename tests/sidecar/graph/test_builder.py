"""The main graph's shape: the nodes and edges of DESIGN.md §4."""

from __future__ import annotations

from typing import Any, cast

from sidecar.graph.builder import NODES, build_graph
from sidecar.graph.deps import GraphDeps
from sidecar.turn.state import RESET, append_or_reset


def _edges() -> set[tuple[str, str]]:
    deps = cast(GraphDeps, None)  # building the graph does not touch its dependencies
    compiled: Any = build_graph(deps).compile()
    return {(e.source, e.target) for e in compiled.get_graph().edges}


def test_the_graph_has_exactly_the_designed_nodes_and_edges():
    edges = _edges()
    expected = {
        ("__start__", "context"),
        ("context", "planner"),
        ("planner", "tool"),
        ("planner", "dispatch"),
        ("planner", "interrupt"),
        ("planner", "persist"),
        ("tool", "planner"),
        ("dispatch", "planner"),
        ("dispatch", "subagent"),
        ("dispatch", "dispatch"),
        ("subagent", "dispatch"),
        ("interrupt", "planner"),
        ("persist", "__end__"),
    }
    assert edges == expected
    assert {n for edge in edges for n in edge} - {"__start__", "__end__"} == set(NODES)


def test_the_scratchpad_appends_within_a_turn_and_resets_at_its_end():
    first = append_or_reset([], [{"role": "user", "content": "a"}])
    second = append_or_reset(first, [{"role": "tool", "content": "b"}])
    assert [e["content"] for e in second] == ["a", "b"]
    assert append_or_reset(second, RESET) == []
