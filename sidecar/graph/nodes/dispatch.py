"""dispatch: send tasks to subagent subgraphs.

Wired into the graph now; the planner is offered a dispatch tool only once subagent profiles
exist, so until then nothing routes here. Reaching it anyway is reported, not faked.
"""

from __future__ import annotations

from typing import Any

from sidecar.graph.state import TurnState


async def dispatch(state: TurnState) -> dict[str, Any]:
    del state
    note = {
        "role": "system",
        "content": "Subagents are not available in this version; do the work with your tools.",
    }
    return {"scratch": [note]}
