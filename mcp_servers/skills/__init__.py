"""Agent Skills (`<name>/SKILL.md` folders) as an MCP server: list, load, read a file, run a
script. See `catalog` for discovery and the rules checked, `listing` for the context budget."""

from mcp_servers.skills.server import build_server

__all__ = ["build_server"]
