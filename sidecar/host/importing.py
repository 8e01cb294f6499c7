"""Import servers from another host's config: Claude Desktop, Cursor, Claude Code, VS Code.

They all keep a name → entry map (`mcpServers`, or `servers` in VS Code) with `command`/`args`/
`env` or `url`/`headers`. Keys only another host understands (auto-approve lists, its own
timeouts) are dropped, and every imported server starts untrusted: trust is the author's call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sidecar.host.config import ConfigInvalidError, ConfigIssue, ServerConfig, validate_entry

_KEPT = ("command", "args", "env", "cwd", "url", "headers")
_HTTP_TYPES = {"http", "streamable-http", "streamableHttp"}


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import would add, and what it skips (with the reason)."""

    servers: tuple[ServerConfig, ...]
    skipped: tuple[ConfigIssue, ...]


def import_name(name: str) -> str:
    """A foreign server name made valid here (`My Server.v2` → `My-Server-v2`)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-_")
    return re.sub(r"_{2,}", "_", cleaned)[:64] or "server"


def plan_import(raw: object, *, taken: frozenset[str] = frozenset()) -> ImportPlan:
    """The servers of a foreign config (already parsed JSON). Names in `taken` (configured or
    built-in) are skipped, never overwritten."""
    entries = _entries(raw)
    if entries is None:
        issue = ConfigIssue("no `mcpServers` (or `servers`) object in the file", None, "mcpServers")
        return ImportPlan((), (issue,))
    servers: list[ServerConfig] = []
    skipped: list[ConfigIssue] = []
    used = set(taken)
    for foreign_name, entry in entries.items():
        name = import_name(foreign_name)
        if name in used:
            skipped.append(ConfigIssue("a server of this name already exists", name, "name"))
            continue
        try:
            config = _convert(name, entry, reserved=frozenset(taken))
        except ConfigInvalidError as exc:
            skipped.extend(exc.issues)
            continue
        used.add(name)
        servers.append(config)
    return ImportPlan(tuple(servers), tuple(skipped))


def read_foreign_config(path: Path) -> object:
    """Raises:
    ConfigInvalidError: the file cannot be read or is not JSON."""
    try:
        return json.loads(path.expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigInvalidError([ConfigIssue(f"cannot read {path}: {exc}", None, "path")]) from exc


def _entries(raw: object) -> dict[str, object] | None:
    if not isinstance(raw, dict):
        return None
    data = cast(dict[str, Any], raw)
    for key in ("mcpServers", "servers"):
        value = data.get(key)
        if isinstance(value, dict):
            return cast(dict[str, object], value)
    return None


def _convert(name: str, entry: object, *, reserved: frozenset[str]) -> ServerConfig:
    if not isinstance(entry, dict):
        raise ConfigInvalidError([ConfigIssue("the entry must be a JSON object", name)])
    data = cast(dict[str, Any], entry)
    kind = data.get("type") or data.get("transport")
    if kind in ("sse", "ws", "websocket"):
        raise ConfigInvalidError(
            [ConfigIssue(f"the {kind} transport is not supported", name, "type")]
        )
    url = data.get("url") or data.get("serverUrl")
    kept: dict[str, Any] = {k: data[k] for k in _KEPT if k in data and data[k] is not None}
    if url is not None:
        kept["url"] = url
    if kind in _HTTP_TYPES or kind == "stdio":
        kept["type"] = "http" if kind in _HTTP_TYPES else "stdio"
    disabled = data.get("disabled")
    if isinstance(disabled, bool):
        kept["enabled"] = not disabled
    return validate_entry(name, kept, reserved=reserved)
