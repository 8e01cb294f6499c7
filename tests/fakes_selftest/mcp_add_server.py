"""A one-tool stdio MCP server (`add`) for the real-CLI MCP round trips."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer(name="own", version="0.0.1")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    app.run()
