"""The schedule MCP server: one-shot, interval and cron schedules that run a prompt.

The book and timing import no MCP code, so the sidecar's scheduler pays nothing for the SDK
until the server itself is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .book import SCHEDULE_SCHEMA, Fire, Schedule, ScheduleBook
from .errors import ErrorCode, ScheduleRefusal

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build_server(book: ScheduleBook) -> MCPServer:
    """The MCP server over `book` (see `.server`)."""
    from .server import build_server as build

    return build(book)


__all__ = [
    "SCHEDULE_SCHEMA",
    "ErrorCode",
    "Fire",
    "Schedule",
    "ScheduleBook",
    "ScheduleRefusal",
    "build_server",
]
