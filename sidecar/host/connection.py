"""One supervised server: a long-lived session in its own task, restarted with backoff.

States: `starting` → `ready` (or `degraded`: connected, but listing tools failed or a call hit
its time limit) → `crashed` when the session ends unasked → `backoff` while waiting to retry →
`starting` again; `stopped` after a stop, `disabled` when the config says so. A crash that cannot
be cured by retrying (bad config, command not found) stays `crashed` until the author acts, and so
does a server that crashed `max_attempts` times in a row.

The SDK's client must be entered and left in one task, so the session lives in the supervisor
task and calls borrow it. A call on a server that is not connected fails at once; a call in flight
when the server dies fails as soon as its stream ends.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import time
from contextlib import AsyncExitStack, suppress
from typing import TYPE_CHECKING, Any

from sidecar.host.config import ConfigInvalidError
from sidecar.host.features.client import ClientFeatures
from sidecar.host.launch import HttpTarget, Launch, LaunchError, Target, stdio_transport
from sidecar.host.logs import ProtocolLog, StderrTail, WatchedTransport
from sidecar.host.secrets import Redactor
from sidecar.host.spec import (
    RestartPolicy,
    ServerSpec,
    ServerState,
    ServerStatus,
    StatusListener,
)
from sidecar.host.types import HostTool

if TYPE_CHECKING:
    from mcp import Client

    from sidecar.host.stdio import StdioTransport

log = logging.getLogger(__name__)


class _Crash(Exception):
    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class Connection:
    """The supervisor of one server (see the module docstring)."""

    def __init__(
        self,
        spec: ServerSpec,
        features: ClientFeatures,
        policy: RestartPolicy,
        on_status: StatusListener,
        logs: tuple[StderrTail, ProtocolLog] | None = None,
    ) -> None:
        self.spec = spec
        self.features = features
        self.policy = policy
        self.on_status = on_status
        self.stderr, self.protocol = logs or (StderrTail(), ProtocolLog())
        self.state: ServerState = "starting" if spec.enabled else "disabled"
        self.error: str | None = None
        self.client: Client | None = None
        self.closed = asyncio.Event()
        self.tools: list[HostTool] = []
        self.settled = asyncio.Event()
        self.attempt_done = asyncio.Event()
        self.restarts = 0
        self.retry_at: float | None = None
        self.task: asyncio.Task[None] | None = None
        self._process: StdioTransport | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._attempts = 0

    @property
    def pid(self) -> int | None:
        """The server's process id while a stdio session is up."""
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self._supervise(), name=f"mcp:{self.spec.name}")

    async def stop(self) -> None:
        """End the session (a server still starting is not waited for)."""
        self._stopping = True
        self._wake.set()
        if self.task is not None:
            if self.state == "starting":
                if self._process is not None:
                    self._process.hurry()  # nothing to finish: do not wait on its own exit
                self.task.cancel()
            with suppress(asyncio.CancelledError):
                await self.task
        if self.state != "stopped":
            self.tools = []
            self.set_state("stopped")
        self.settled.set()
        self.attempt_done.set()

    def restart(self) -> None:
        """Reconnect now (ending a live session), forgetting earlier crashes."""
        self._attempts = 0
        self._wake.set()
        self.start()

    def status(self) -> ServerStatus:
        retry = max(0.0, self.retry_at - time.monotonic()) if self.retry_at else None
        return ServerStatus(
            name=self.spec.name,
            state=self.state,
            error=self.error,
            tool_count=len(self.tools),
            trusted=self.spec.trusted,
            enabled=self.spec.enabled,
            builtin=self.spec.builtin,
            required=self.spec.required,
            transport=self.spec.transport,
            restarts=self.restarts,
            retry_in_s=retry if self.state == "backoff" else None,
            config=self.spec.config,
            pid=self.pid,
        )

    def set_state(self, state: ServerState, error: str | None = None) -> None:
        self.state, self.error = state, error
        self.protocol.add("host", state + (f": {error}" if error else ""))
        if state in ("crashed", "degraded"):
            log.warning("MCP server %s %s: %s", self.spec.name, state, error)
        self.on_status(self.status())

    async def _supervise(self) -> None:
        if not self.spec.enabled:
            self.settled.set()
            self.on_status(self.status())
            return
        try:
            await self._loop()
        finally:
            self.retry_at = None
            self.tools = []
            self.set_state("stopped")
            self.settled.set()
            self.attempt_done.set()

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                await self._session()
                if self._stopping:
                    break
                self._attempts = 0
                self.restarts += 1
                continue  # a restart was asked for
            except _Crash as crash:
                if self._stopping:
                    break
                self.set_state("crashed", str(crash))
                self.attempt_done.set()
                self.settled.set()
                await self._after_crash(crash)

    async def _after_crash(self, crash: _Crash) -> None:
        if not crash.retryable or self._attempts >= self.policy.max_attempts:
            if crash.retryable:
                self.set_state("crashed", f"{crash} (gave up after {self._attempts} restarts)")
            self._wake.clear()
            await self._wake.wait()
        else:
            delay = self.policy.delay(self._attempts)
            self._attempts += 1
            self.retry_at = time.monotonic() + delay
            self.set_state("backoff", self.error)
            self._wake.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            self.retry_at = None
        self.restarts += 1

    async def _session(self) -> None:
        """One session, from launch to its end. Returns when a stop or restart was asked for.

        Raises:
            _Crash: it failed to start or ended unasked.
        """
        self._wake.clear()
        self.attempt_done = asyncio.Event()
        self.set_state("starting")
        try:
            launch = await asyncio.to_thread(_load, self.spec)
        except (ConfigInvalidError, LaunchError) as exc:
            raise _Crash(str(exc), retryable=False) from exc
        except Exception as exc:  # the target is the server's own code (in-process) or config
            raise _Crash(f"{type(exc).__name__}: {exc}", retryable=False) from exc
        redact = Redactor(launch.secrets)
        self.stderr.redact = self.protocol.redact = redact
        try:
            async with AsyncExitStack() as stack:
                target, closed = await self._open(launch.target, stack)
                client = await self._connect(target, stack)
                await self._serve(client, closed)
        except _Crash:
            raise
        except Exception as exc:  # process boundary: any failure of the server is its state
            leaf = _leaf(exc)
            if isinstance(leaf, _Crash):
                raise leaf from None
            raise _Crash(redact(self._describe(leaf))) from exc
        finally:
            if self.client is not None:
                self.features.disconnected(self.spec.name)
            self.client = None
            self._process = None
            self.closed.set()

    async def _open(self, target: Target, stack: AsyncExitStack) -> tuple[Any, asyncio.Event]:
        from mcp import StdioServerParameters

        if isinstance(target, StdioServerParameters):
            self.stderr.begin_launch()
            transport = stdio_transport(target, self.stderr.add)
            self._process = transport
            watch = WatchedTransport(transport, self.protocol)
            return watch, watch.closed
        if isinstance(target, HttpTarget):
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(
                headers=target.headers, timeout=httpx2.Timeout(30.0, read=300.0)
            )
            await stack.enter_async_context(http)
            watch = WatchedTransport(
                streamable_http_client(target.url, http_client=http), self.protocol
            )
            return watch, watch.closed
        return target, asyncio.Event()

    async def _connect(self, target: Any, stack: AsyncExitStack) -> Client:
        from mcp import Client

        kwargs = self.features.client_kwargs(self.spec.name)
        client = Client(
            target,
            raise_exceptions=False,
            read_timeout_seconds=self.policy.start_timeout_s,
            **kwargs,
        )
        await stack.enter_async_context(client)
        return client

    async def _serve(self, client: Client, closed: asyncio.Event) -> None:
        self.client = client
        self.closed = closed
        await self.features.connected(self.spec.name, client)
        started = time.monotonic()
        await self.refresh_tools(initial=True)
        self.attempt_done.set()
        self.settled.set()
        stop = asyncio.ensure_future(self._wake.wait())
        ended = asyncio.ensure_future(closed.wait())
        try:
            await asyncio.wait({stop, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            ended.cancel()
        if time.monotonic() - started >= self.policy.stable_s:
            self._attempts = 0
        if not self._wake.is_set():
            raise _Crash(await self._ended())

    async def _ended(self) -> str:
        code: int | None = None
        if self._process is not None:
            # The stream can end a moment before the exit status is known.
            with suppress(TimeoutError, RuntimeError):
                code = await asyncio.wait_for(self._process.wait_exit(), 0.5)
        text = "the server closed the connection"
        if code is not None:
            text = (
                f"the server exited with code {code}"
                if code >= 0
                else f"the server was killed (signal {-code})"
            )
        last = self.stderr.last_line()
        return text + (f"; stderr: {last}" if last else "")

    async def refresh_tools(self, *, initial: bool = False) -> None:
        """List the tools again (after `notifications/tools/list_changed` or a reconnect);
        a failed listing leaves the server `degraded` with the tools it had."""
        from mcp.shared.exceptions import MCPError

        client = self.client
        if client is None:
            return
        try:
            listed: list[Any] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except (MCPError, TimeoutError) as exc:
            if initial:
                raise
            self.set_state("degraded", f"listing tools failed: {exc}")
            return
        self.tools = [_host_tool(self.spec, t) for t in listed if self.spec.tool_allowed(t.name)]
        self.set_state("ready")

    def _describe(self, exc: BaseException) -> str:
        text = f"{type(exc).__name__}: {exc}"
        last = self.stderr.last_line()
        return text + (f"; stderr: {last}" if last else "")


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return _leaf(inner[0]) if inner else exc


_IMPORTS = threading.Lock()


def _load(spec: ServerSpec) -> Launch:
    """Runs in a worker thread. Several servers start at once: importing the SDK in parallel
    threads trips over partially initialised modules, so the first import is serialised."""
    with _IMPORTS:
        for module in ("mcp.client.streamable_http", "mcp.server.mcpserver", "sidecar.host.stdio"):
            importlib.import_module(module)
    target = spec.target()
    return target if isinstance(target, Launch) else Launch(target)


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
