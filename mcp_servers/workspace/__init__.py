"""The built-in workspace MCP server: confined file tools over the author's workspace."""

from .errors import ErrorCode, PathError, WorkspaceError
from .ops import Limits
from .preview import preview_edit, preview_write
from .server import build_server

__all__ = [
    "ErrorCode",
    "Limits",
    "PathError",
    "WorkspaceError",
    "build_server",
    "preview_edit",
    "preview_write",
]
