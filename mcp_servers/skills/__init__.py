"""Agent Skills (`<name>/SKILL.md` folders) as an MCP server: list, load, read a file, run a
script. See `catalog` for discovery and the rules checked, `listing` for the context budget.

This module is the face the sidecar may import (the context's skills listing, the skills methods,
the Skill Composer and a strong agent's working copy read the catalog); the submodules are
private.
"""

from mcp_servers.skills.catalog import (
    MAX_NAME,
    RESOURCE_DIRS,
    SKILL_FILE,
    Skill,
    SkillRoot,
    body,
    default_roots,
    read_skill,
    scan,
    skill_folders,
)
from mcp_servers.skills.listing import Listing, build_listing
from mcp_servers.skills.server import Catalog, build_server

__all__ = [
    "MAX_NAME",
    "RESOURCE_DIRS",
    "SKILL_FILE",
    "Catalog",
    "Listing",
    "Skill",
    "SkillRoot",
    "body",
    "build_listing",
    "build_server",
    "default_roots",
    "read_skill",
    "scan",
    "skill_folders",
]
