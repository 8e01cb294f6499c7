"""server/* and grant/*: the servers panel and the grants panel."""

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
from sidecar.protocol import ErrorCode, RpcError
from sidecar.protocol.servers import (
    ConfigIssueInfo,
    Done,
    GrantInfo,
    GrantListResult,
    GrantRevokeParams,
    LaunchPreviewInfo,
    ProtocolLogEntryInfo,
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


@registry.method("server/list")
async def list_servers(svc: Services, params: Done) -> ServerListResult:
    del params
    host = svc.host
    path = host.config_file.path if host.config_file else svc.data_dir / "mcp.json"
    return ServerListResult(
        servers=tuple(server_info(s) for s in host.statuses()),
        config_issues=_issues(host.config_issues),
        config_path=str(path),
    )


@registry.method("server/add")
async def add(svc: Services, params: ServerConfigParams) -> ServerInfo:
    config = _config(svc, params.config)
    with _server_errors():
        return server_info(await svc.host.add(config))


@registry.method("server/update")
async def update(svc: Services, params: ServerConfigParams) -> ServerInfo:
    config = _config(svc, params.config)
    with _server_errors():
        return server_info(await svc.host.update(config))


@registry.method("server/remove")
async def remove(svc: Services, params: ServerRef) -> Done:
    with _server_errors():
        await svc.host.remove(params.name)
    return Done()


@registry.method("server/set_enabled")
async def set_enabled(svc: Services, params: ServerSetEnabledParams) -> ServerInfo:
    with _server_errors():
        return server_info(await svc.host.set_enabled(params.name, params.enabled))


@registry.method("server/restart")
async def restart(svc: Services, params: ServerRef) -> ServerInfo:
    with _server_errors():
        return server_info(svc.host.restart(params.name))


@registry.method("server/logs")
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


@registry.method("server/preview")
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


@registry.method("server/test")
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


@registry.method("server/import")
async def import_servers(svc: Services, params: ServerImportParams) -> ServerImportResult:
    with _server_errors():
        plan = await svc.host.import_file(Path(params.path))
    return ServerImportResult(
        added=tuple(c.name for c in plan.servers), skipped=_issues(plan.skipped)
    )


@registry.method("server/set_secret")
async def set_secret(svc: Services, params: SecretSetParams) -> Done:
    del svc
    with _server_errors():
        await asyncio.to_thread(set_keyring_secret, params.name, params.value or None)
    return Done()


@registry.method("grant/list")
async def list_grants(svc: Services, params: Done) -> GrantListResult:
    del params
    return GrantListResult(
        grants=tuple(
            GrantInfo(
                thread_id=g.thread_id,
                thread_title=g.thread_title,
                server=g.server,
                tool=g.tool,
                created_at=g.created_at,
            )
            for g in svc.store.all_grants()
        )
        + tuple(
            GrantInfo(
                thread_id=v.thread_id,
                thread_title=v.thread_title,
                server=v.grant.server,
                tool=v.grant.tool,
                created_at=v.grant.created_at,
                plan_id=v.grant.plan_id,
                plan_goal=v.goal,
                task_id=v.grant.task_id,
                paths=v.grant.paths,
            )
            for v in svc.store.live_plan_grants()
        )
    )


@registry.method("grant/revoke")
async def revoke_grant(svc: Services, params: GrantRevokeParams) -> Done:
    if params.plan_id is not None:
        task = params.task_id or ""
        found = svc.store.revoke_plan_grant(params.plan_id, task, params.server, params.tool)
    else:
        found = svc.store.revoke_grant(params.thread_id, params.server, params.tool)
    if not found:
        raise RpcError(ErrorCode.GRANT_NOT_FOUND, "no such grant")
    return Done()
