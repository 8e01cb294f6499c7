"""The memory MCP server: four tiers of memories with provenance and full-text search.

This module is the face the sidecar may import (its context assembly and memory methods use
the store directly, as the one writer); the submodules are private.
"""

from .errors import MemoryErrorCode, MemoryRefusal
from .query import fts_query, selective_terms, terms_of
from .server import PROVENANCE_LABELS, SCOPE_ARGUMENTS, WRITE_TOOLS, build_server, public_schema
from .store import (
    MEMORY_SCHEMA,
    PROVENANCES,
    TIERS,
    Memory,
    MemoryStore,
    Provenance,
    Scope,
    Tier,
    add_provenance,
    check_text,
    check_tier,
)

__all__ = [
    "MEMORY_SCHEMA",
    "PROVENANCES",
    "PROVENANCE_LABELS",
    "SCOPE_ARGUMENTS",
    "TIERS",
    "WRITE_TOOLS",
    "Memory",
    "MemoryErrorCode",
    "MemoryRefusal",
    "MemoryStore",
    "Provenance",
    "Scope",
    "Tier",
    "add_provenance",
    "build_server",
    "check_text",
    "check_tier",
    "fts_query",
    "public_schema",
    "selective_terms",
    "terms_of",
]
