"""The sidecar's MCP client host: built-in servers plus the author's servers from `mcp.json`.

Each server has its own supervisor (`connection.Connection`): one long-lived session, restarted
with backoff, restartable alone without touching the others or any thread. Tools are named
`<server>__<tool>`; a call goes to its server's live session or fails at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from sidecar.host.config import ConfigFile, ConfigIssue, ServerConfig
from sidecar.host.connection import Connection
from sidecar.host.features.client import ClientFeatures, NoFeatures
from sidecar.host.importing import ImportPlan, plan_import, read_foreign_config
from sidecar.host.launch import LaunchPreview, build_launch, preview
from sidecar.host.logs import ProtocolLogEntry, StderrTail
from sidecar.host.secrets import SecretLookup, keyring_secret
from sidecar.host.spec import (
    RequiredServerError,
    RestartPolicy,
    ServerSpec,
    ServerState,
    ServerStatus,
    ServerUnavailableError,
    StatusListener,
)
from sidecar.host.testing import TestReport, test_connection
from sidecar.host.tool_call import call_tool
from sidecar.host.types import HostTool, ProgressSink, ToolOutcome, UnknownToolError, split_name

__all__ = [
    "ServerExistsError",
    "ServerNotFoundError",
    "ServerSpec",
    "ServerState",
    "ServerStatus",
    "ServerUnavailableError",
    "ToolHost",
    "spec_from_config",
]

log = logging.getLogger(__name__)


class ServerNotFoundError(LookupError):
    """No server of this name (or it is built in, where an external one was meant)."""


class ServerExistsError(ValueError):
    """A server of this name already exists."""


def spec_from_config(
    config: ServerConfig,
    env: Mapping[str, str] | None = None,
    secret: SecretLookup = keyring_secret,
) -> ServerSpec:
    """The supervisor spec of an external server (placeholders resolve at each launch)."""
    return ServerSpec(
        name=config.name,
        target=functools.partial(build_launch, config, env, secret),
        trusted=config.trusted,
        builtin=False,
        enabled=config.enabled,
        required=config.required,
        timeout_s=config.timeout,
        idle_timeout_s=config.idle_timeout,
        transport=config.transport,
        config=config,
    )


class ToolHost:
    """Supervises every server and routes tool calls to them."""

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        features: ClientFeatures | None = None,
        config_file: ConfigFile | None = None,
        policy: RestartPolicy | None = None,
        on_status: StatusListener | None = None,
        env: Mapping[str, str] | None = None,
        secret: SecretLookup = keyring_secret,
    ) -> None:
        self._features = features or NoFeatures()
        self._policy = policy or RestartPolicy()
        self._listeners: list[StatusListener] = [on_status] if on_status else []
        self._env = env
        self._secret = secret
        self._started = False
        self._connections: dict[str, Connection] = {}
        self.builtins = frozenset(s.name for s in specs)
        for spec in specs:
            self._connections[spec.name] = self._connection(spec)
        self.config_file = config_file
        self.config_issues: tuple[ConfigIssue, ...] = ()
        if config_file is not None:
            config_file.reserved = self.builtins
            loaded = config_file.load()
            self.config_issues = loaded.issues
            for issue in loaded.issues:
                log.error("mcp.json: %s", issue)
            for config in loaded.servers.values():
                self._connections[config.name] = self._connection(self._spec(config))

    def add_listener(self, listener: StatusListener) -> None:
        """Receive every server's status changes (the desktop's `server/status`)."""
        self._listeners.append(listener)

    def _notify(self, status: ServerStatus) -> None:
        for listener in self._listeners:
            listener(status)

    def _spec(self, config: ServerConfig) -> ServerSpec:
        return spec_from_config(config, self._env, self._secret)

    def _connection(self, spec: ServerSpec, old: Connection | None = None) -> Connection:
        logs = (old.stderr, old.protocol) if old is not None else None
        return Connection(spec, self._features, self._policy, self._notify, logs)

    def start(self) -> None:
        """Begin connecting to every server in the background (once; later calls do nothing)."""
        self._started = True
        for conn in self._connections.values():
            conn.start()

    async def wait_ready(self) -> None:
        """Wait until the built-in and `required` servers have connected or failed (starting
        them if needed). Other servers never hold up a turn; a call to one waits for it."""
        self.start()
        waited = [
            c.settled.wait()
            for c in self._connections.values()
            if c.spec.builtin or c.spec.required
        ]
        await asyncio.gather(*waited)

    async def check_required(self) -> None:
        """Wait for the servers a turn needs; raise if a `required` one is not connected.

        Raises:
            RequiredServerError: names each required server that is down and why.
        """
        await self.wait_ready()
        down = [
            f"{c.spec.name} ({c.state}{': ' + c.error if c.error else ''})"
            for c in self._connections.values()
            if c.spec.required and c.state not in ("ready", "degraded", "disabled")
        ]
        if down:
            raise RequiredServerError(
                "required MCP server not connected: "
                + "; ".join(down)
                + ". Fix or restart it in the MCP servers panel, or unmark it as required."
            )

    async def wait_for_tool(self, name: str) -> None:
        """Wait (bounded) until the server of tool `name` has finished starting."""
        self.start()
        with suppress(UnknownToolError):
            conn = self._connections.get(split_name(name)[0])
            if conn is not None and conn.state == "starting":
                with suppress(TimeoutError):
                    await asyncio.wait_for(conn.attempt_done.wait(), self._policy.start_timeout_s)

    async def wait_starting(self, bound_s: float) -> None:
        """Wait (at most `bound_s`) until every server that is starting has finished its
        attempt, connected or not: a listing made right after start-up then shows their tools."""
        self.start()
        starting = [
            c.attempt_done.wait() for c in self._connections.values() if c.state == "starting"
        ]
        if starting:
            with suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*starting), bound_s)

    async def replace(self, spec: ServerSpec) -> None:
        """Reconnect one server with a new spec (e.g. the workspace after its root changed);
        the others are untouched. Its stderr tail and protocol log carry over."""
        old = self._connections.get(spec.name)
        if old is not None:
            await old.stop()
        conn = self._connection(spec, old)
        self._connections[spec.name] = conn
        if self._started or old is not None:
            conn.start()

    async def aclose(self) -> None:
        await asyncio.gather(*(c.stop() for c in self._connections.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._connections

    def states(self) -> dict[str, tuple[ServerState, str | None]]:
        return {n: (c.state, c.error) for n, c in self._connections.items()}

    def statuses(self) -> list[ServerStatus]:
        return [c.status() for c in self._connections.values()]

    def status(self, name: str) -> ServerStatus:
        return self._get(name).status()

    def _get(self, name: str) -> Connection:
        """Raises:
        ServerNotFoundError: no such server."""
        conn = self._connections.get(name)
        if conn is None:
            raise ServerNotFoundError(f"no server named {name!r}")
        return conn

    def _external(self, name: str) -> Connection:
        conn = self._get(name)
        if conn.spec.builtin:
            raise ServerNotFoundError(f"{name!r} is built in; it is not configured in mcp.json")
        return conn

    def tools(self) -> list[HostTool]:
        return [
            t
            for c in self._connections.values()
            if c.state in ("ready", "degraded")
            for t in c.tools
        ]

    def find(self, name: str) -> HostTool:
        """Raises:
        UnknownToolError: no server offers this tool (or its config turns it off)."""
        server, tool = split_name(name)
        conn = self._connections.get(server)
        if conn is not None:
            for candidate in conn.tools:
                if candidate.tool == tool:
                    return candidate
            if not conn.spec.tool_allowed(tool):
                raise UnknownToolError(f"{name!r} is turned off in the config of {server!r}")
        raise UnknownToolError(f"no tool named {name!r}")

    async def call(
        self, name: str, arguments: dict[str, Any], on_progress: ProgressSink | None = None
    ) -> ToolOutcome:
        """Run a tool. Server-side failures (an invalid reply, a JSON-RPC error) and time-outs
        come back as `is_error` outcomes, each with a one-line reason.

        Raises:
            UnknownToolError: no such tool.
            ServerUnavailableError: its server is not connected, or died during the call.
        """
        tool = self.find(name)
        return await call_tool(self._connections[tool.server], tool, arguments, on_progress)

    async def refresh_tools(self, server: str) -> None:
        """Re-list one server's tools (on `notifications/tools/list_changed`)."""
        conn = self._connections.get(server)
        if conn is not None:
            await conn.refresh_tools()

    def restart(self, name: str) -> ServerStatus:
        """Reconnect one server now; threads and other servers are untouched.

        Raises:
            ServerNotFoundError: no such server.
        """
        conn = self._get(name)
        if conn.spec.enabled:
            self._started = True
            conn.restart()
        return conn.status()

    def logs(self, name: str) -> tuple[list[str], list[ProtocolLogEntry]]:
        """The server's stderr tail and protocol log (both redacted of its secrets)."""
        conn = self._get(name)
        return list(conn.stderr.lines), list(conn.protocol.entries)

    def stderr_tail(self, name: str) -> StderrTail:
        """The live stderr tail of a server (e.g. to wait for a line)."""
        return self._get(name).stderr

    def config(self, name: str) -> ServerConfig:
        config = self._external(name).spec.config
        assert config is not None
        return config

    async def add(self, config: ServerConfig) -> ServerStatus:
        """Add a server to `mcp.json` and start it.

        Raises:
            ServerExistsError: the name is taken (by a built-in or configured server).
        """
        if config.name in self._connections:
            raise ServerExistsError(f"a server named {config.name!r} already exists")
        return await self._apply(config)

    async def update(self, config: ServerConfig) -> ServerStatus:
        """Change a configured server and reconnect it.

        Raises:
            ServerNotFoundError: no configured server of this name.
        """
        self._external(config.name)
        return await self._apply(config)

    async def set_enabled(self, name: str, enabled: bool) -> ServerStatus:
        config = self.config(name).model_copy(update={"enabled": enabled})
        return await self._apply(config)

    async def remove(self, name: str) -> None:
        conn = self._external(name)
        await conn.stop()
        del self._connections[name]
        if self.config_file is not None:
            self.config_file.remove(name)
            self.config_issues = self.config_file.load().issues
        self._notify(conn.status())

    async def _apply(self, config: ServerConfig) -> ServerStatus:
        if self.config_file is not None:
            self.config_file.put(config)
            self.config_issues = self.config_file.load().issues
        self._started = True
        await self.replace(self._spec(config))
        return self._connections[config.name].status()

    def preview(self, config: ServerConfig) -> LaunchPreview:
        return preview(config, self._env, self._secret)

    async def test(self, config: ServerConfig) -> TestReport:
        """Connect to a server once without adding it, list its tools, disconnect."""
        return await test_connection(self._spec(config), self._policy)

    def plan_import(self, path: Path) -> ImportPlan:
        """Raises:
        ConfigInvalidError: the file cannot be read."""
        raw = read_foreign_config(path)
        return plan_import(raw, taken=frozenset(self._connections))

    async def import_file(self, path: Path) -> ImportPlan:
        """Add every server of a Claude Desktop / Cursor config that is valid and not taken."""
        plan = self.plan_import(path)
        for config in plan.servers:
            await self.add(config)
        return plan
