"""An MCP server for the unattended-run tests: one read-only tool that asks the author for a
name in a form while it runs (from protocol 2026-07-28 on a call asks by returning
`InputRequiredResult`; the client's retry carries the answer)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build_desk_server() -> MCPServer:
    server = MCPServer(name="desk")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def ask_name(ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks the author's name in a form; says what the author did."""
        answer = (ctx.input_responses or {}).get("name")
        if isinstance(answer, ElicitResult):
            return CallToolResult(content=[TextContent(type="text", text=f"form: {answer.action}")])
        ask = ElicitRequest(
            params=ElicitRequestFormParams(message="Your name?", requested_schema=SCHEMA)
        )
        return InputRequiredResult(input_requests={"name": ask}, request_state="asked")

    return server
