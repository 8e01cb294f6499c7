"""One long-lived MCP session per server; tools listed once per connection; calls routed by name.

Each connection lives in its own task, because the SDK's client must be entered and left in the
same task. A server that failed to start or died fails its calls at once instead of hanging.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from sidecar.host.features import ClientFeatures, NoFeatures
from sidecar.host.types import HostTool, ProgressSink, ToolOutcome, UnknownToolError, split_name

if TYPE_CHECKING:
    from mcp import Client, StdioServerParameters
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)

ServerState = Literal["starting", "ready", "crashed", "stopped"]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one server. `target` is called in the connection task, so heavy imports and
    process launches stay off the start-up path."""

    name: str
    target: Callable[[], MCPServer | StdioServerParameters]
    trusted: bool = True


class ServerUnavailableError(RuntimeError):
    """The server is not connected (failed to start or died)."""


class _Connection:
    def __init__(self, spec: ServerSpec, features: ClientFeatures) -> None:
        self.spec = spec
        self.features = features
        self.state: ServerState = "starting"
        self.error: str | None = None
        self.client: Client | None = None
        self.tools: list[HostTool] = []
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def serve(self) -> None:
        try:
            # The SDK and the server modules are heavy to import; a worker thread keeps the
            # event loop answering requests meanwhile.
            target = await asyncio.to_thread(_load, self.spec)
            from mcp import Client

            kwargs = self.features.client_kwargs(self.spec.name)
            async with Client(target, raise_exceptions=False, **kwargs) as client:
                listed = await client.list_tools()
                self.tools = [_host_tool(self.spec, t) for t in listed.tools]
                self.client = client
                self.state = "ready"
                self.ready.set()
                await self.stop.wait()
        except Exception as exc:  # process boundary: any failure of the server is its state
            log.exception("MCP server %s failed", self.spec.name)
            self.error = f"{type(exc).__name__}: {exc}"
            self.state = "crashed"
        finally:
            self.client = None
            if self.state != "crashed":
                self.state = "stopped"
            self.ready.set()


def _load(spec: ServerSpec) -> MCPServer | StdioServerParameters:
    import mcp

    del mcp
    return spec.target()


def _host_tool(spec: ServerSpec, tool: Any) -> HostTool:
    annotations = tool.annotations
    read_only = bool(annotations and annotations.read_only_hint)
    destructive = not read_only and (
        annotations is None or annotations.destructive_hint is None or annotations.destructive_hint
    )
    return HostTool(
        server=spec.name,
        tool=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        read_only=read_only,
        destructive=bool(destructive),
        trusted=spec.trusted,
    )


class ToolHost:
    """The sidecar's MCP client host."""

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        call_timeout_s: float = 600.0,
        features: ClientFeatures | None = None,
    ) -> None:
        self._features = features or NoFeatures()
        self._connections = {s.name: _Connection(s, self._features) for s in specs}
        self._call_timeout_s = call_timeout_s

    def start(self) -> None:
        """Begin connecting to every server in the background (once; later calls do nothing)."""
        for conn in self._connections.values():
            if conn.task is None:
                conn.task = asyncio.create_task(conn.serve(), name=f"mcp:{conn.spec.name}")

    async def wait_ready(self) -> None:
        """Wait until every server is connected or has failed, starting them if needed."""
        self.start()
        await asyncio.gather(*(c.ready.wait() for c in self._connections.values()))

    async def replace(self, spec: ServerSpec) -> None:
        """Reconnect one server (e.g. the workspace after its root changed); others untouched."""
        old = self._connections.get(spec.name)
        if old is not None:
            await _stop(old)
        conn = _Connection(spec, self._features)
        self._connections[spec.name] = conn
        conn.task = asyncio.create_task(conn.serve(), name=f"mcp:{spec.name}")

    async def aclose(self) -> None:
        await asyncio.gather(*(_stop(c) for c in self._connections.values()))

    def states(self) -> dict[str, tuple[ServerState, str | None]]:
        return {n: (c.state, c.error) for n, c in self._connections.items()}

    def tools(self) -> list[HostTool]:
        return [t for c in self._connections.values() if c.state == "ready" for t in c.tools]

    def find(self, name: str) -> HostTool:
        """Raises:
        UnknownToolError: no connected server offers this tool."""
        server, tool = split_name(name)
        conn = self._connections.get(server)
        if conn is not None:
            for candidate in conn.tools:
                if candidate.tool == tool:
                    return candidate
        raise UnknownToolError(f"no tool named {name!r}")

    async def call(
        self, name: str, arguments: dict[str, Any], on_progress: ProgressSink | None = None
    ) -> ToolOutcome:
        """Run a tool. Server-side failures come back as `is_error` outcomes.

        Raises:
            UnknownToolError: no such tool.
            ServerUnavailableError: its server is not connected.
        """
        tool = self.find(name)
        conn = self._connections[tool.server]
        await conn.ready.wait()
        client = conn.client
        if client is None:
            raise ServerUnavailableError(f"server {tool.server!r} is {conn.state}: {conn.error}")
        from mcp.shared.exceptions import MCPError

        try:
            result = await client.call_tool(
                tool.tool,
                arguments,
                read_timeout_seconds=self._call_timeout_s,
                progress_callback=on_progress,
            )
        except MCPError as exc:
            return ToolOutcome(is_error=True, text=f"{tool.server} refused the call: {exc}")
        texts = [getattr(block, "text", f"[{block.type} content]") for block in result.content]
        structured = result.structured_content
        return ToolOutcome(
            is_error=result.is_error,
            text="\n".join(texts),
            structured=cast(dict[str, Any], structured) if isinstance(structured, dict) else None,
        )


async def _stop(conn: _Connection) -> None:
    conn.stop.set()
    if conn.task is not None:
        with suppress(asyncio.CancelledError):
            await conn.task
