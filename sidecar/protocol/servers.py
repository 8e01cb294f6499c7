"""Wire methods for plugged-in MCP servers (`server/*`, the servers panel).

A server's config is the `mcp.json` entry (Claude Desktop's `mcpServers` shape plus Atrium's
keys); values may hold `${env:NAME}` / `${secret:NAME}` placeholders, and secret values are set
with `server/set_secret` (OS keyring), never sent back. Status changes arrive as `server/status`
notifications carrying the whole `ServerInfo`.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

ServerState: TypeAlias = Literal[
    "starting", "ready", "degraded", "crashed", "backoff", "stopped", "disabled"
]
ServerTransport: TypeAlias = Literal["inprocess", "stdio", "http"]


class ServerConfigInfo(WireModel):
    """One server's config. Give `command` (stdio) or `url` (streamable HTTP)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict[str, str])
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    enabled: bool = True
    trust: Literal["trusted", "untrusted"] = "untrusted"
    timeout: float = Field(default=1800.0, description="Hard cap per call, seconds.")
    idle_timeout: float | None = Field(
        default=300.0, description="Seconds without a reply or progress before a call fails."
    )
    allowed_tools: tuple[str, ...] | None = Field(
        default=None, description="Only these tools (None: all not denied)."
    )
    denied_tools: tuple[str, ...] = ()
    required: bool = Field(default=False, description="Turns wait for this server to start.")


class ServerInfo(WireModel):
    """A server as the panel shows it. Built-in servers have no `config`."""

    name: str
    state: ServerState
    error: str | None = None
    tool_count: int
    trust: Literal["trusted", "untrusted"]
    enabled: bool
    builtin: bool
    required: bool
    transport: ServerTransport
    restarts: int = Field(description="Restarts since the sidecar started (auto and manual).")
    retry_in_s: float | None = Field(default=None, description="In `backoff`: next attempt in.")
    pid: int | None = None
    config: ServerConfigInfo | None = None


class ServerStatusParams(WireModel):
    """The `server/status` notification: one server's new status. `removed` is true when the
    server was removed from the config."""

    server: ServerInfo
    removed: bool = False


class ConfigIssueInfo(WireModel):
    """What is wrong in `mcp.json` or a submitted config, and where."""

    message: str
    server: str | None = None
    field: str | None = None


class ServerListResult(WireModel):
    servers: tuple[ServerInfo, ...]
    config_issues: tuple[ConfigIssueInfo, ...] = ()
    config_path: str


class ServerConfigParams(WireModel):
    config: ServerConfigInfo


class ServerRef(WireModel):
    name: str


class ServerSetEnabledParams(WireModel):
    name: str
    enabled: bool


class ServerLogsParams(WireModel):
    name: str
    limit: int = Field(default=200, ge=1, le=1000, description="Most recent lines of each log.")


class ProtocolLogEntryInfo(WireModel):
    at: float
    direction: Literal["out", "in", "host"] = Field(
        description="`out` to the server, `in` from it, `host`: what the supervisor did."
    )
    text: str


class ServerLogsResult(WireModel):
    stderr: tuple[str, ...]
    protocol: tuple[ProtocolLogEntryInfo, ...]


class ServerPreviewParams(WireModel):
    """Preview a submitted config, or (with `name` only) a configured server."""

    config: ServerConfigInfo | None = None
    name: str | None = None


class LaunchPreviewInfo(WireModel):
    """What launching would do. Environment and header values are never included."""

    transport: ServerTransport
    command: str | None
    resolved_command: str | None = Field(description="The executable found on `path`.")
    args: tuple[str, ...]
    cwd: str | None
    path: tuple[str, ...] = Field(description="The PATH the server gets, in order.")
    env_keys: tuple[str, ...]
    url: str | None
    header_keys: tuple[str, ...]
    placeholders: tuple[str, ...] = Field(description="e.g. `secret:GITHUB_TOKEN (set)`.")
    problems: tuple[str, ...]


class ServerTestResult(WireModel):
    ok: bool
    state: ServerState
    error: str | None
    tools: tuple[str, ...]
    stderr: tuple[str, ...]
    elapsed_s: float


class ServerImportParams(WireModel):
    path: str = Field(description="A Claude Desktop, Cursor, Claude Code or VS Code config file.")


class ServerImportResult(WireModel):
    added: tuple[str, ...]
    skipped: tuple[ConfigIssueInfo, ...]


class SecretSetParams(WireModel):
    """Store a secret for `${secret:NAME}` placeholders in the OS keyring; an empty or missing
    value removes it."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
    value: str | None = None


class Done(WireModel):
    """An empty result."""


SERVER_LIST = "server/list"
SERVER_ADD = "server/add"
SERVER_UPDATE = "server/update"
SERVER_REMOVE = "server/remove"
SERVER_SET_ENABLED = "server/set_enabled"
SERVER_RESTART = "server/restart"
SERVER_LOGS = "server/logs"
SERVER_PREVIEW = "server/preview"
SERVER_TEST = "server/test"
SERVER_IMPORT = "server/import"
SERVER_SET_SECRET = "server/set_secret"

SERVER_METHODS: dict[str, MethodSpec] = {
    SERVER_LIST: MethodSpec(Done, ServerListResult, "Every server with its status."),
    SERVER_ADD: MethodSpec(ServerConfigParams, ServerInfo, "Add a server to mcp.json; start it."),
    SERVER_UPDATE: MethodSpec(ServerConfigParams, ServerInfo, "Change a server; reconnect it."),
    SERVER_REMOVE: MethodSpec(ServerRef, Done, "Stop a server and remove it from mcp.json."),
    SERVER_SET_ENABLED: MethodSpec(ServerSetEnabledParams, ServerInfo, "Enable or disable."),
    SERVER_RESTART: MethodSpec(ServerRef, ServerInfo, "Reconnect one server now."),
    SERVER_LOGS: MethodSpec(ServerLogsParams, ServerLogsResult, "Stderr tail, protocol log."),
    SERVER_PREVIEW: MethodSpec(ServerPreviewParams, LaunchPreviewInfo, "Launch preview."),
    SERVER_TEST: MethodSpec(ServerConfigParams, ServerTestResult, "Connect once, not added."),
    SERVER_IMPORT: MethodSpec(ServerImportParams, ServerImportResult, "Import another host's."),
    SERVER_SET_SECRET: MethodSpec(SecretSetParams, Done, "Store a secret in the OS keyring."),
}

SERVER_STATUS = "server/status"

SERVER_NOTIFICATIONS: dict[str, type[WireModel]] = {
    SERVER_STATUS: ServerStatusParams,
}
