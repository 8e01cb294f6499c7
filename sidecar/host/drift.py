"""Tool-definition drift: what the author approved vs. what the server offers now.

A server can change a tool's description or schema after the author approved it (a "rug pull":
the description is where instructions to the model hide). The definition that counts is the
name, the description and the input schema; its hash is recorded at approval, and a tool whose
hash differs is held until the author approves it again, seeing the difference.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

from sidecar.host.types import HostTool


def definition(tool: HostTool) -> dict[str, Any]:
    """The parts of a tool that an approval covers."""
    return {"name": tool.tool, "description": tool.description, "input_schema": tool.input_schema}


def canonical(defn: dict[str, Any]) -> str:
    return json.dumps(defn, sort_keys=True, indent=2, ensure_ascii=False)


def definition_hash(defn: dict[str, Any]) -> str:
    """A stable sha256 of a definition (key order does not matter)."""
    text = json.dumps(defn, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tool_hash(tool: HostTool) -> str:
    return definition_hash(definition(tool))


def definition_diff(approved: dict[str, Any], current: dict[str, Any]) -> str:
    """A unified diff of the approved definition against the current one."""
    before = canonical(approved).splitlines(keepends=True)
    after = canonical(current).splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, "approved", "now"))
