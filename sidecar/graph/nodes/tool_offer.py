"""The servers' tools a turn's agent is offered, and how the thread's loaded tools grow: by the
tool node's answer to `atrium__tool_search` and by the tools the model calls
(`sidecar.context.tool_search`, `sidecar.store.loaded_tools`).

The planner adds Atrium's own tools to these and chooses what one request carries
(`planner.request_tools`); the tool node searches these. The turn's agent profile is passed
in, since the tool node, which owns `agent_profile`, imports this module.
"""

from __future__ import annotations

from collections.abc import Iterable

from sidecar.context.staging import model_spec
from sidecar.context.tool_search import ATRIUM_PREFIX, search_request, search_tools
from sidecar.graph.deps import GraphDeps
from sidecar.host.types import ToolOutcome
from sidecar.llm.types import ToolCallRequest, ToolSpec
from sidecar.plans.profiles import AGENTS_SERVER, Profile
from sidecar.turn.state import ToolCallEntry


def host_tools(deps: GraphDeps, profile: Profile | None) -> list[ToolSpec]:
    """The connected servers' tools the agent may call: the author's agent every one but the
    agents server's, a subagent its profile's."""
    return [
        model_spec(ToolSpec(t.name, t.description, t.input_schema))
        for t in deps.host.tools()
        # Strong agents are reached through delegation (with profiles, caps and the run tree),
        # not by the model calling the agents server's tools itself; `/call` still can.
        if t.server != AGENTS_SERVER and (profile is None or profile.allows_tool(t.name))
    ]


def load_named(deps: GraphDeps, thread_id: str, calls: Iterable[ToolCallRequest]) -> None:
    """Load the servers' tools the model called for the thread: a deferred one it named is
    sent from its next request on, and the ones it uses stay among the newest."""
    names = [c.name for c in calls if not c.name.startswith(ATRIUM_PREFIX)]
    if names:
        deps.store.loaded_tools.load_tools(thread_id, names, "named")


async def answer_search(
    deps: GraphDeps, thread_id: str, profile: Profile | None, call: ToolCallEntry
) -> ToolOutcome:
    """Run an `atrium__tool_search` call over the tools the agent may call, and load what it
    found for the thread (the best match newest)."""
    request = search_request(call["arguments"])
    if isinstance(request, str):
        return ToolOutcome(is_error=True, text=request)
    outcome = await search_tools(host_tools(deps, profile), request)
    found = [spec.name for spec in reversed(outcome.found)]
    deps.store.loaded_tools.load_tools(thread_id, found, "found")
    return ToolOutcome(is_error=outcome.unknown_server, text=outcome.text())
