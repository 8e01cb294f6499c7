"""The MCP client features: progress, logging, roots, elicitation, sampling, resources, prompts.

Whoever builds a server's client asks `client_kwargs(server)` for the callbacks to install (a
callback given makes the client advertise the capability), then reports the session's life with
`connected(server, client)` / `disconnected(server)`, so the feature methods can reach it.

Server requests that need the author (elicitation, sampling) arrive while one of the server's
tools runs inside the graph; they become live interrupts of the run that owns the call (see
`sidecar.binding.calls`). Without such a call there is nobody to ask: elicitation is cancelled and
sampling refused.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from sidecar.binding.calls import InFlightCalls, LiveInterruptDropped
from sidecar.host.features import catalog
from sidecar.host.features.elicit import check_content, elicit_result, form_payload, with_defaults
from sidecar.host.features.logs import LogLevel, ServerLogs, as_level, render
from sidecar.host.features.sampling import (
    USER_REJECTED,
    Sampler,
    SamplingFailedError,
    create_message_result,
    error_data,
    sampling_payload,
    sampling_request,
)

log = logging.getLogger(__name__)

NotificationListener = Callable[[str, str], Awaitable[None]]
"""Called with (server, method) for each list-changed / resource-updated notification."""

_NOTED = {
    "notifications/tools/list_changed": "the server's tools changed",
    "notifications/prompts/list_changed": "the server's prompts changed",
    "notifications/resources/list_changed": "the server's resources changed",
}


class ClientFeatures(Protocol):
    """The seam between connections and the client features."""

    def client_kwargs(self, server: str) -> dict[str, Any]:
        """Keyword arguments for `mcp.Client(...)` of this server: `sampling_callback`,
        `elicitation_callback`, `list_roots_callback`, `logging_callback`, `message_handler`,
        `log_level`. A callback given here makes the client advertise the capability."""
        ...

    async def connected(self, server: str, client: Any) -> None:
        """The server's client finished its handshake (call before its tools are offered)."""
        ...

    def disconnected(self, server: str) -> None:
        """The server's client is gone (stopped, crashed or being replaced)."""
        ...


class NoFeatures:
    """No optional client capabilities: tools only."""

    def client_kwargs(self, server: str) -> dict[str, Any]:
        del server
        return {}

    async def connected(self, server: str, client: Any) -> None:
        del server, client

    def disconnected(self, server: str) -> None:
        del server


class FeatureUnavailableError(RuntimeError):
    """The server is not connected, or does not offer the feature."""


class FeatureRefusedError(RuntimeError):
    """The server refused the request; the message is the server's."""


class HostFeatures:
    """Every client feature, for every server of one host.

    `workspace` is offered as the only root; `sampler` answers approved sampling requests (None:
    sampling is not advertised). `calls` is the registry the runtime binds runs to.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        sampler: Sampler | None = None,
        logs: ServerLogs | None = None,
        calls: InFlightCalls | None = None,
    ) -> None:
        self.workspace = workspace
        self.sampler = sampler
        self.logs = logs or ServerLogs()
        self.calls = calls or InFlightCalls()
        self._clients: dict[str, Any] = {}
        self._listeners: list[NotificationListener] = []
        self._listener_tasks: set[asyncio.Task[None]] = set()

    # -- connection seam ------------------------------------------------------------------------

    def client_kwargs(self, server: str) -> dict[str, Any]:
        async def on_elicit(context: Any, params: Any) -> Any:
            del context
            return await self._elicit(server, params)

        async def on_sample(context: Any, params: Any) -> Any:
            del context
            return await self._sample(server, params)

        async def on_roots(context: Any) -> Any:
            del context
            return self._roots(server)

        async def on_log(params: Any) -> None:
            self._log(server, params)

        async def on_message(message: Any) -> None:
            await self._notified(server, message)

        kwargs: dict[str, Any] = {
            "elicitation_callback": on_elicit,
            "list_roots_callback": on_roots,
            "logging_callback": on_log,
            "message_handler": on_message,
            "log_level": self.logs.level(server) or "info",
        }
        if self.sampler is not None:
            kwargs["sampling_callback"] = on_sample
        return kwargs

    async def connected(self, server: str, client: Any) -> None:
        self._clients[server] = client
        level = self.logs.level(server)
        if level is not None and _legacy(client) and _offers(client, "logging"):
            await self._send_level(server, client, level)

    def disconnected(self, server: str) -> None:
        self._clients.pop(server, None)

    def add_listener(self, listener: NotificationListener) -> None:
        """Hear about list-changed and resource-updated notifications (e.g. to refresh tools)."""
        self._listeners.append(listener)

    def connected_servers(self) -> list[str]:
        return sorted(self._clients)

    # -- server requests ------------------------------------------------------------------------

    async def _elicit(self, server: str, params: Any) -> Any:
        call = self.calls.owner(server)
        payload = form_payload(server, params)
        if call is None:
            log.warning("%s asked for input outside a tool call; cancelled", server)
            return elicit_result({"action": "cancel"})
        schema: dict[str, Any] = payload["requested_schema"]

        def check(value: dict[str, Any]) -> str | None:
            if value.get("action") != "accept":
                return None
            return check_content(schema, with_defaults(schema, value).get("content"))

        try:
            answer = await call.ask(payload, check)
        except LiveInterruptDropped:
            return elicit_result({"action": "cancel"})
        url_mode = payload.get("url") is not None
        return elicit_result(
            answer if url_mode else with_defaults(schema, answer), url_mode=url_mode
        )

    async def _sample(self, server: str, params: Any) -> Any:
        sampler = self.sampler
        call = self.calls.owner(server)
        if sampler is None or call is None:
            return error_data(USER_REJECTED, "Sampling needs a running turn to ask the author.")
        request = sampling_request(params)
        try:
            answer = await call.ask(sampling_payload(server, request, params), None)
        except LiveInterruptDropped:
            return error_data(USER_REJECTED, "The request was dropped before the author answered.")
        if answer.get("decision") != "allow":
            reason = answer.get("reason")
            suffix = f" Reason: {reason}" if reason else ""
            return error_data(USER_REJECTED, f"The author denied the sampling request.{suffix}")
        try:
            reply = await sampler(request)
        except SamplingFailedError as exc:
            return error_data(USER_REJECTED, f"Sampling failed: {exc}")
        return create_message_result(reply)

    def _roots(self, server: str) -> Any:
        from mcp import types

        root = self.workspace.resolve()
        self.logs.add(server, "debug", f"roots sent: {root.as_uri()}", source="host")
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name=root.name)])  # pyright: ignore[reportArgumentType]

    async def set_workspace(self, workspace: Path) -> None:
        """The workspace moved: tell every connected server its roots changed."""
        self.workspace = workspace
        for server, client in list(self._clients.items()):
            if not _legacy(client):
                continue
            try:
                with _deprecated_ok():
                    await client.send_roots_list_changed()
            except Exception:  # one server's broken pipe must not stop the others hearing
                log.warning("could not tell %s its roots changed", server, exc_info=True)

    # -- notifications ----------------------------------------------------------------------

    def _log(self, server: str, params: Any) -> None:
        self.logs.add(server, as_level(params.level), render(params.data), logger=params.logger)

    async def _notified(self, server: str, message: Any) -> None:
        if isinstance(message, Exception):
            self.logs.add(server, "error", f"transport error: {message}", source="host")
            return
        method = str(getattr(message, "method", ""))
        if method == "notifications/resources/updated":
            uri = getattr(getattr(message, "params", None), "uri", "")
            self.logs.add(server, "info", f"resource updated: {uri}", source="host")
        elif method in _NOTED:
            self.logs.add(server, "info", _NOTED[method], source="host")
        else:
            return
        # Not awaited here: a listener may send requests on the same session (e.g. re-list
        # its tools), which must not wait on the notification path that delivers the replies.
        for listener in list(self._listeners):
            task = asyncio.ensure_future(_heard(listener, server, method))
            self._listener_tasks.add(task)
            task.add_done_callback(self._listener_tasks.discard)

    # -- feature methods ------------------------------------------------------------------------

    def client(self, server: str) -> Any:
        """Raises:
        FeatureUnavailableError: the server is not connected."""
        client = self._clients.get(server)
        if client is None:
            raise FeatureUnavailableError(f"server {server!r} is not connected")
        return client

    async def set_log_level(self, server: str, level: LogLevel) -> bool:
        """Remember the level and ask the server for it now if it can (2025-era connection);
        True if it was sent now, False if it applies from the next connection.

        Raises:
            FeatureRefusedError: the server refused the level.
        """
        self.logs.set_level(server, level)
        client = self._clients.get(server)
        if client is None or not _legacy(client) or not _offers(client, "logging"):
            return False
        await self._send_level(server, client, level)
        return True

    async def _send_level(self, server: str, client: Any, level: LogLevel) -> None:
        with _refusals(server), _deprecated_ok():
            await client.set_logging_level(level)

    async def resources(
        self, server: str | None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Resources and templates of one server, or of every connected one that has any.

        Raises:
            FeatureUnavailableError, FeatureRefusedError: for a named server only.
        """
        resources: list[dict[str, Any]] = []
        templates: list[dict[str, Any]] = []
        for name in [server] if server else self.connected_servers():
            client = self.client(name)
            if not _offers(client, "resources"):
                if server:
                    raise FeatureUnavailableError(f"server {name!r} offers no resources")
                continue
            with _refusals(name):
                found, found_templates = await catalog.list_resources(name, client)
            resources += found
            templates += found_templates
        return resources, templates

    async def read_resource(self, server: str, uri: str) -> dict[str, Any]:
        """Raises:
        FeatureUnavailableError, FeatureRefusedError."""
        client = self.client(server)
        with _refusals(server):
            return await catalog.read_resource(server, client, uri)

    async def attach_resource(self, server: str, uri: str) -> dict[str, Any]:
        """Raises:
        FeatureUnavailableError, FeatureRefusedError."""
        return catalog.attachment(await self.read_resource(server, uri))

    async def subscribe_resource(self, server: str, uri: str, *, subscribe: bool) -> None:
        """Raises:
        FeatureUnavailableError, FeatureRefusedError."""
        client = self.client(server)
        capability = getattr(client.server_capabilities, "resources", None)
        if not _legacy(client) or not getattr(capability, "subscribe", False):
            raise FeatureUnavailableError(f"server {server!r} offers no resource subscriptions")
        with _refusals(server), _deprecated_ok():
            if subscribe:
                await client.subscribe_resource(uri)
            else:
                await client.unsubscribe_resource(uri)

    async def prompts(self, server: str | None) -> list[dict[str, Any]]:
        """Raises:
        FeatureUnavailableError, FeatureRefusedError: for a named server only."""
        found: list[dict[str, Any]] = []
        for name in [server] if server else self.connected_servers():
            client = self.client(name)
            if not _offers(client, "prompts"):
                if server:
                    raise FeatureUnavailableError(f"server {name!r} offers no prompts")
                continue
            with _refusals(name):
                found += await catalog.list_prompts(name, client)
        return found

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> dict[str, Any]:
        """Raises:
        FeatureUnavailableError, FeatureRefusedError."""
        client = self.client(server)
        with _refusals(server):
            return await catalog.get_prompt(server, client, name, arguments)


async def _heard(listener: NotificationListener, server: str, method: str) -> None:
    try:
        await listener(server, method)
    except Exception:  # a listener's failure must not be lost silently, nor stop the others
        log.exception("listener for %s from %s failed", method, server)


def _legacy(client: Any) -> bool:
    """A 2025-era (initialize handshake) connection, where logging/setLevel, subscriptions and
    roots/list_changed are still regular requests."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return client.protocol_version not in MODERN_PROTOCOL_VERSIONS


def _offers(client: Any, capability: str) -> bool:
    return getattr(client.server_capabilities, capability, None) is not None


@contextmanager
def _refusals(server: str) -> Generator[None]:
    from mcp.shared.exceptions import MCPError

    try:
        yield
    except MCPError as exc:
        raise FeatureRefusedError(f"{server}: {exc}") from exc


@contextmanager
def _deprecated_ok() -> Generator[None]:
    """logging/setLevel, subscriptions and roots are deprecated in 2026-07-28 but are how
    2025-era servers work; the SDK's deprecation warning says nothing the host can act on."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield
