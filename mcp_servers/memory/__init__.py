"""The memory MCP server: four tiers of memories with provenance and full-text search."""

from .errors import MemoryErrorCode, MemoryRefusal
from .query import fts_query
from .server import SCOPE_ARGUMENTS, WRITE_TOOLS, build_server, public_schema
from .store import TIERS, Memory, MemoryStore, Scope, Tier

__all__ = [
    "SCOPE_ARGUMENTS",
    "TIERS",
    "WRITE_TOOLS",
    "Memory",
    "MemoryErrorCode",
    "MemoryRefusal",
    "MemoryStore",
    "Scope",
    "Tier",
    "build_server",
    "fts_query",
    "public_schema",
]
