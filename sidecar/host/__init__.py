"""The MCP client host: connections to every MCP server, tool calls, permission policy."""
