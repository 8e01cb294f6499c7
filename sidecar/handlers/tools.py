"""tool/list."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    TOOL_LIST,
    Empty,
    ToolInfo,
    ToolListResult,
)

# How long a listing waits for servers still starting (external ones too); one slower than this
# is listed without its tools, as its status says.
STARTING_WAIT_S = 5.0


@registry.method(TOOL_LIST)
async def list_tools(svc: Services, params: Empty) -> ToolListResult:
    del params
    await svc.host.wait_ready()
    await svc.host.wait_starting(STARTING_WAIT_S)
    tools = sorted(svc.host.tools(), key=lambda t: t.name)
    return ToolListResult(
        tools=tuple(
            ToolInfo(
                name=t.name,
                server=t.server,
                tool=t.tool,
                description=t.description,
                read_only=t.read_only,
                destructive=t.destructive,
                input_schema=t.input_schema,
            )
            for t in tools
        )
    )
