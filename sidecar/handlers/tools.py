"""tool/list."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import Empty, ToolInfo, ToolListResult


@registry.method("tool/list")
async def list_tools(svc: Services, params: Empty) -> ToolListResult:
    del params
    await svc.host.wait_ready()
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
