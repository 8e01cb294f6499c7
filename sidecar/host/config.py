"""`mcp.json`: the author's external MCP servers, in Claude Desktop's `mcpServers` shape.

Each entry is either stdio (`command`, `args`, `env`, `cwd`) or streamable HTTP (`url`,
`headers`), plus Atrium's keys: `enabled`, `trust`, `timeout` (hard cap per call, seconds),
`idle_timeout` (seconds without a reply or progress), `allowed_tools`, `denied_tools`, `required`.
Values may hold `${env:NAME}` and `${secret:NAME}` placeholders; they are resolved at launch and
never written back. A bad entry is reported with its server and field and skipped; the others
still load, and the file keeps the bad entry untouched until the author fixes it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

log = logging.getLogger(__name__)

Trust: TypeAlias = Literal["trusted", "untrusted"]
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
DEFAULT_TIMEOUT_S = 1800.0
DEFAULT_IDLE_TIMEOUT_S = 300.0


class ServerConfig(BaseModel):
    """One server's entry, validated. Unknown keys are errors (a typo must not go unnoticed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict[str, str])
    cwd: str | None = None
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    enabled: bool = True
    trust: Trust = "untrusted"
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=86_400)
    idle_timeout: float | None = Field(default=DEFAULT_IDLE_TIMEOUT_S, gt=0, le=86_400)
    allowed_tools: tuple[str, ...] | None = None
    denied_tools: tuple[str, ...] = ()
    required: bool = False

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if self.command is None and self.url is None:
            raise ValueError("give either `command` (stdio) or `url` (streamable HTTP)")
        if self.command is not None and self.url is not None:
            raise ValueError("give `command` or `url`, not both")
        if self.type == "stdio" and self.command is None:
            raise ValueError("`type` is stdio but there is no `command`")
        if self.type not in (None, "stdio") and self.url is None:
            raise ValueError(f"`type` is {self.type} but there is no `url`")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def trusted(self) -> bool:
        return self.trust == "trusted"

    def tool_allowed(self, tool: str) -> bool:
        """Deny wins over allow; no allow-list means every tool not denied."""
        if tool in self.denied_tools:
            return False
        return self.allowed_tools is None or tool in self.allowed_tools

    def to_entry(self) -> dict[str, Any]:
        """The entry as written to `mcp.json` (without its name, without defaults)."""
        return self.model_dump(mode="json", exclude={"name"}, exclude_defaults=True)


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """What is wrong with the file or one of its entries; `server`/`field` say where."""

    message: str
    server: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = ""
        if self.server is not None:
            where = f"server {self.server!r}"
            if self.field:
                where += f", field {self.field!r}"
            where += ": "
        return where + self.message


class ConfigInvalidError(ValueError):
    """An entry (or the file) cannot be used; `issues` say where and why."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        super().__init__("; ".join(str(i) for i in issues))
        self.issues = issues


def validate_entry(
    name: str, entry: object, *, reserved: frozenset[str] = frozenset()
) -> ServerConfig:
    """Validate one `mcpServers` entry.

    Raises:
        ConfigInvalidError: the name or a field is invalid (each issue names the field).
    """
    if not NAME_PATTERN.match(name) or "__" in name:
        raise ConfigInvalidError(
            [ConfigIssue("use letters, digits, '-' and '_' (no '__'), at most 64", name, "name")]
        )
    if name in reserved:
        raise ConfigInvalidError(
            [ConfigIssue("this name belongs to a built-in server", name, "name")]
        )
    if not isinstance(entry, dict):
        raise ConfigInvalidError([ConfigIssue("the entry must be a JSON object", name)])
    data = {**cast(dict[str, Any], entry), "name": name}
    if data.get("command") is None and data.get("url") is None:
        issue = ConfigIssue(
            "give either `command` (stdio) or `url` (streamable HTTP)", name, "command"
        )
        raise ConfigInvalidError([issue])
    try:
        return ServerConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigInvalidError(
            [
                ConfigIssue(e["msg"], name, ".".join(str(p) for p in e["loc"]) or None)
                for e in exc.errors(include_url=False)
            ]
        ) from exc


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict[str, ServerConfig])
    issues: tuple[ConfigIssue, ...] = ()


def parse_config(raw: object, *, reserved: frozenset[str] = frozenset()) -> LoadedConfig:
    """Every valid entry of a parsed `mcp.json`, and an issue for each bad one."""
    if not isinstance(raw, dict):
        return LoadedConfig(issues=(ConfigIssue("the file must hold a JSON object"),))
    entries = cast(dict[str, Any], raw).get("mcpServers", {})
    if not isinstance(entries, dict):
        return LoadedConfig(
            issues=(ConfigIssue("`mcpServers` must be an object", None, "mcpServers"),)
        )
    servers: dict[str, ServerConfig] = {}
    issues: list[ConfigIssue] = []
    for name, entry in cast(dict[str, object], entries).items():
        try:
            servers[name] = validate_entry(name, entry, reserved=reserved)
        except ConfigInvalidError as exc:
            issues.extend(exc.issues)
    return LoadedConfig(servers, tuple(issues))


class ConfigFile:
    """The `mcp.json` file. Edits change one entry in the raw JSON, so entries this version
    cannot read (or that are broken) survive; a corrupt file is set aside, never lost."""

    def __init__(self, path: Path, *, reserved: frozenset[str] = frozenset()) -> None:
        self.path = path
        self.reserved = reserved

    def _raw(self) -> dict[str, Any]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"mcpServers": {}}
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        return cast(dict[str, Any], raw)

    def load(self) -> LoadedConfig:
        try:
            raw = self._raw()
        except (OSError, ValueError) as exc:
            return LoadedConfig(issues=(ConfigIssue(f"{self.path.name} is unreadable: {exc}"),))
        return parse_config(raw, reserved=self.reserved)

    def put(self, config: ServerConfig) -> None:
        """Write (add or replace) one entry."""

        def change(servers: dict[str, Any]) -> None:
            servers[config.name] = config.to_entry()

        self._edit(change)

    def remove(self, name: str) -> None:
        def change(servers: dict[str, Any]) -> None:
            servers.pop(name, None)

        self._edit(change)

    def _edit(self, change: Callable[[dict[str, Any]], None]) -> None:
        try:
            raw = self._raw()
        except (OSError, ValueError) as exc:
            backup = self.path.with_suffix(f".corrupt-{int(time.time())}.json")
            log.error("%s unreadable (%s); moved to %s", self.path, exc, backup)
            self.path.replace(backup)
            raw = {}
        found = raw.get("mcpServers")
        servers: dict[str, Any] = cast(dict[str, Any], found) if isinstance(found, dict) else {}
        raw["mcpServers"] = servers
        change(servers)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.path)
