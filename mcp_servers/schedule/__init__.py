"""The schedule MCP server: one-shot, interval and cron schedules that run a prompt.

The book and timing import no MCP code, so the sidecar's scheduler pays nothing for the SDK
until the server itself is built. This module is the face the sidecar may import (its scheduler
reads the book and computes fire times); the submodules are private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .book import (
    DEFAULT_DENY_AFTER_MINUTES,
    MAX_DENY_AFTER_MINUTES,
    SCHEDULE_SCHEMA,
    UNATTENDED,
    Fire,
    Schedule,
    ScheduleBook,
    add_unattended,
)
from .errors import ErrorCode, ScheduleRefusal
from .timing import fires_between, local_iso, local_zone_name, next_after, zone

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build_server(book: ScheduleBook) -> MCPServer:
    """The MCP server over `book` (see `.server`)."""
    from .server import build_server as build

    return build(book)


__all__ = [
    "DEFAULT_DENY_AFTER_MINUTES",
    "MAX_DENY_AFTER_MINUTES",
    "SCHEDULE_SCHEMA",
    "UNATTENDED",
    "ErrorCode",
    "Fire",
    "Schedule",
    "ScheduleBook",
    "ScheduleRefusal",
    "add_unattended",
    "build_server",
    "fires_between",
    "local_iso",
    "local_zone_name",
    "next_after",
    "zone",
]
