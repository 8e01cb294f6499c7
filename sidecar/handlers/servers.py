"""server/*: the servers panel (config, status, logs, launch preview, import, secrets)."""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from pathlib import Path

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.host.config import ConfigInvalidError, ConfigIssue, ServerConfig, validate_entry
from sidecar.host.host import ServerExistsError, ServerNotFoundError, ToolHost
from sidecar.host.launch import LaunchPreview
from sidecar.host.secrets import set_keyring_secret
from sidecar.host.spec import ServerStatus
from sidecar.keychain import KeyringUnavailableError
from sidecar.protocol import (
    SERVER_ADD,
    SERVER_IMPORT,
    SERVER_LIST,
    SERVER_LOGS,
    SERVER_PREVIEW,
    SERVER_REMOVE,
    SERVER_RESTART,
    SERVER_SET_ENABLED,
    SERVER_SET_SECRET,
    SERVER_TEST,
    SERVER_UPDATE,
    ConfigIssueInfo,
    Done,
    ErrorCode,
    LaunchPreviewInfo,
    ProtocolLogEntryInfo,
    RpcError,
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


def server_info(status: ServerStatus) -> ServerInfo:
    config = status.config
    return ServerInfo(
        name=status.name,
        state=status.state,
        error=status.error,
        tool_count=status.tool_count,
        trust="trusted" if status.trusted else "untrusted",
        enabled=status.enabled,
        builtin=status.builtin,
        required=status.required,
        transport=status.transport,
        restarts=status.restarts,
        retry_in_s=status.retry_in_s,
        pid=status.pid,
        config=ServerConfigInfo.model_validate(config.model_dump(exclude={"type"}))
        if config
        else None,
    )


def status_notification(host: ToolHost, status: ServerStatus) -> ServerStatusParams:
    """The `server/status` params for a status change (`removed` once it left the config)."""
    return ServerStatusParams(server=server_info(status), removed=status.name not in host)


def _issues(issues: Iterable[ConfigIssue]) -> tuple[ConfigIssueInfo, ...]:
    return tuple(ConfigIssueInfo(message=i.message, server=i.server, field=i.field) for i in issues)


@contextmanager
def _server_errors() -> Generator[None]:
    try:
        yield
    except ServerNotFoundError as exc:
        raise RpcError(ErrorCode.SERVER_NOT_FOUND, str(exc)) from exc
    except ServerExistsError as exc:
        raise RpcError(ErrorCode.SERVER_EXISTS, str(exc)) from exc
    except ConfigInvalidError as exc:
        data = {"issues": [i.model_dump() for i in _issues(exc.issues)]}
        raise RpcError(ErrorCode.CONFIG_INVALID, str(exc), data) from exc
    except KeyringUnavailableError as exc:
        raise RpcError(ErrorCode.KEYRING_UNAVAILABLE, str(exc)) from exc


def _config(svc: Services, info: ServerConfigInfo) -> ServerConfig:
    """Raises:
    RpcError: CONFIG_INVALID, with the issues (server and field) as data."""
    entry = info.model_dump(exclude={"name"})
    with _server_errors():
        return validate_entry(info.name, entry, reserved=svc.host.builtins)


@registry.method(SERVER_LIST)
async def list_servers(svc: Services, params: Done) -> ServerListResult:
    del params
    host = svc.host
    path = host.config_file.path if host.config_file else svc.data_dir / "mcp.json"
    return ServerListResult(
        servers=tuple(server_info(s) for s in host.statuses()),
        config_issues=_issues(host.config_issues),
        config_path=str(path),
    )


@registry.method(SERVER_ADD)
async def add(svc: Services, params: ServerConfigParams) -> ServerInfo:
    config = _config(svc, params.config)
    with _server_errors():
        return server_info(await svc.host.add(config))


@registry.method(SERVER_UPDATE)
async def update(svc: Services, params: ServerConfigParams) -> ServerInfo:
    config = _config(svc, params.config)
    with _server_errors():
        return server_info(await svc.host.update(config))


@registry.method(SERVER_REMOVE)
async def remove(svc: Services, params: ServerRef) -> Done:
    with _server_errors():
        await svc.host.remove(params.name)
    return Done()


@registry.method(SERVER_SET_ENABLED)
async def set_enabled(svc: Services, params: ServerSetEnabledParams) -> ServerInfo:
    with _server_errors():
        return server_info(await svc.host.set_enabled(params.name, params.enabled))


@registry.method(SERVER_RESTART)
async def restart(svc: Services, params: ServerRef) -> ServerInfo:
    with _server_errors():
        return server_info(svc.host.restart(params.name))


@registry.method(SERVER_LOGS)
async def logs(svc: Services, params: ServerLogsParams) -> ServerLogsResult:
    with _server_errors():
        stderr, protocol = svc.host.logs(params.name)
    return ServerLogsResult(
        stderr=tuple(stderr[-params.limit :]),
        protocol=tuple(
            ProtocolLogEntryInfo(at=e.at, direction=e.direction, text=e.text)
            for e in protocol[-params.limit :]
        ),
    )


@registry.method(SERVER_PREVIEW)
async def preview(svc: Services, params: ServerPreviewParams) -> LaunchPreviewInfo:
    if params.config is not None:
        config = _config(svc, params.config)
    elif params.name is not None:
        with _server_errors():
            config = svc.host.config(params.name)
    else:
        raise RpcError(ErrorCode.INVALID_PARAMS, "give `config` or `name`")
    shown = await asyncio.to_thread(svc.host.preview, config)
    return _preview_info(shown)


def _preview_info(shown: LaunchPreview) -> LaunchPreviewInfo:
    return LaunchPreviewInfo(
        transport="stdio" if shown.transport == "stdio" else "http",
        command=shown.command,
        resolved_command=shown.resolved,
        args=shown.args,
        cwd=shown.cwd,
        path=shown.path,
        env_keys=shown.env_keys,
        url=shown.url,
        header_keys=shown.header_keys,
        placeholders=shown.placeholders,
        problems=shown.problems,
    )


@registry.method(SERVER_TEST)
async def test(svc: Services, params: ServerConfigParams) -> ServerTestResult:
    config = _config(svc, params.config)
    report = await svc.host.test(config)
    return ServerTestResult(
        ok=report.ok,
        state=report.state,
        error=report.error,
        tools=report.tools,
        stderr=report.stderr,
        elapsed_s=report.elapsed_s,
    )


@registry.method(SERVER_IMPORT)
async def import_servers(svc: Services, params: ServerImportParams) -> ServerImportResult:
    with _server_errors():
        plan = await svc.host.import_file(Path(params.path))
    return ServerImportResult(
        added=tuple(c.name for c in plan.servers), skipped=_issues(plan.skipped)
    )


@registry.method(SERVER_SET_SECRET)
async def set_secret(svc: Services, params: SecretSetParams) -> Done:
    del svc
    with _server_errors():
        await asyncio.to_thread(set_keyring_secret, params.name, params.value or None)
    return Done()
