"""`ServersController`: the MCP servers and grants panels' requests, and their replies as state.

Like `SessionController` it never waits: each method sends one request and returns its
`PendingRequest`; replies that change the server list or the grants update `ServersState` /
`GrantsState`, and callers chain `.then` for results they show (logs, preview, test, import).
Failures are reported through `error_reported` and also reach the caller's `.then` error callback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest, ResultT
from desktop.models.emitter import Emitter
from desktop.models.servers import GrantsState, ServersState, grant_key
from sidecar.protocol import (
    Done,
    ErrorObject,
    GrantInfo,
    GrantListResult,
    GrantRevokeParams,
    LaunchPreviewInfo,
    SecretSetParams,
    ServerConfigInfo,
    ServerConfigParams,
    ServerImportParams,
    ServerImportResult,
    ServerInfo,
    ServerListResult,
    ServerLogsParams,
    ServerLogsResult,
    ServerPreviewParams,
    ServerRef,
    ServerSetEnabledParams,
    ServerStatusParams,
    ServerTestResult,
)

logger = logging.getLogger(__name__)


class ServersController:
    """Server and grant actions → requests; replies and `server/status` → state. No Qt.

    Events:
        error_reported(str): a request failed; a short sentence for the panel.
    """

    def __init__(
        self, api: SidecarApi, servers: ServersState, grants: GrantsState | None = None
    ) -> None:
        self.error_reported: Emitter[[str]] = Emitter()
        self._api = api
        self.servers = servers
        self.grants = grants if grants is not None else GrantsState()

    def handle_status(self, params: ServerStatusParams) -> None:
        self.servers.apply_status(params)

    def refresh(self) -> PendingRequest[ServerListResult]:
        """`server/list`: replace the server list and config issues."""
        return self._send(self._api.server_list(), "Listing servers", self._on_list)

    def add(self, config: ServerConfigInfo) -> PendingRequest[ServerInfo]:
        pending = self._api.server_add(ServerConfigParams(config=config))
        return self._send(pending, f"Adding {config.name}", self.servers.upsert)

    def update(self, config: ServerConfigInfo) -> PendingRequest[ServerInfo]:
        pending = self._api.server_update(ServerConfigParams(config=config))
        return self._send(pending, f"Saving {config.name}", self.servers.upsert)

    def remove(self, name: str) -> PendingRequest[Done]:
        return self._send(
            self._api.server_remove(ServerRef(name=name)), f"Removing {name}",
            lambda _done: self.servers.remove(name),
        )  # fmt: skip

    def set_enabled(self, name: str, enabled: bool) -> PendingRequest[ServerInfo]:
        params = ServerSetEnabledParams(name=name, enabled=enabled)
        verb = "Enabling" if enabled else "Disabling"
        pending = self._api.server_set_enabled(params)
        return self._send(pending, f"{verb} {name}", self.servers.upsert)

    def restart(self, name: str) -> PendingRequest[ServerInfo]:
        pending = self._api.server_restart(ServerRef(name=name))
        return self._send(pending, f"Restarting {name}", self.servers.upsert)

    def logs(self, name: str, limit: int = 200) -> PendingRequest[ServerLogsResult]:
        """`server/logs`; chain `.then` for the `ServerLogsResult`."""
        params = ServerLogsParams(name=name, limit=limit)
        return self._send(self._api.server_logs(params), f"Loading {name}'s logs")

    def preview(
        self, config: ServerConfigInfo | None = None, name: str | None = None
    ) -> PendingRequest[LaunchPreviewInfo]:
        """`server/preview` of a submitted config or a configured server (`LaunchPreviewInfo`)."""
        params = ServerPreviewParams(config=config, name=name)
        return self._send(self._api.server_preview(params), "The launch preview")

    def test(self, config: ServerConfigInfo) -> PendingRequest[ServerTestResult]:
        """`server/test`: connect once without adding; chain `.then` for `ServerTestResult`."""
        pending = self._api.server_test(ServerConfigParams(config=config))
        return self._send(pending, f"Testing {config.name}")

    def import_config(self, path: str) -> PendingRequest[ServerImportResult]:
        """`server/import` another host's config file, then reload the list."""

        def on_imported(result: ServerImportResult) -> None:
            if result.added:
                self.refresh()

        pending = self._api.server_import(ServerImportParams(path=path))
        return self._send(pending, "Importing", on_imported)

    def set_secret(self, name: str, value: str | None) -> PendingRequest[Done]:
        """Store (or, with an empty value, remove) a `${secret:NAME}` value in the keyring."""
        params = SecretSetParams(name=name, value=value or None)
        return self._send(self._api.server_set_secret(params), f"Storing secret {name}")

    def refresh_grants(self) -> PendingRequest[GrantListResult]:
        def on_list(result: GrantListResult) -> None:
            self.grants.set_all(result.grants)

        return self._send(self._api.grant_list(), "Listing grants", on_list)

    def revoke_grant(self, grant: GrantInfo) -> PendingRequest[Done]:
        key = grant_key(grant)
        params = GrantRevokeParams(
            thread_id=grant.thread_id,
            server=grant.server,
            tool=grant.tool,
            plan_id=grant.plan_id,
            task_id=grant.task_id,
        )
        return self._send(
            self._api.grant_revoke(params), f"Revoking {grant.server}/{grant.tool}",
            lambda _done: self.grants.remove(key),
        )  # fmt: skip

    def _on_list(self, result: ServerListResult) -> None:
        self.servers.set_list(result)

    def _send(
        self,
        pending: PendingRequest[ResultT],
        what: str,
        on_result: Callable[[ResultT], None] | None = None,
    ) -> PendingRequest[ResultT]:
        def on_error(error: ErrorObject) -> None:
            logger.warning("%s failed: %s (%s)", what, error.message, error.code)
            self.error_reported.emit(f"{what} failed: {error.message}")

        return pending.then(on_result, on_error)
