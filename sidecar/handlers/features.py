"""server_log/*, resource/*, prompt/*: the MCP client features the desktop reaches directly."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.host.features.client import FeatureRefusedError, FeatureUnavailableError
from sidecar.protocol import (
    PROMPT_GET,
    PROMPT_LIST,
    RESOURCE_ATTACH,
    RESOURCE_LIST,
    RESOURCE_READ,
    RESOURCE_SUBSCRIBE,
    SERVER_LOG_LIST,
    SERVER_LOG_SET_LEVEL,
    FeatureErrorCode,
    FeaturesEmpty,
    PromptGetParams,
    PromptGetResult,
    PromptListParams,
    PromptListResult,
    ResourceAttachResult,
    ResourceListParams,
    ResourceListResult,
    ResourceReadResult,
    ResourceRef,
    ResourceSubscribeParams,
    RpcError,
    ServerLogEntry,
    ServerLogListParams,
    ServerLogListResult,
    ServerLogSetLevelParams,
    ServerLogSetLevelResult,
)


@contextmanager
def _feature_errors() -> Generator[None]:
    try:
        yield
    except FeatureUnavailableError as exc:
        raise RpcError(FeatureErrorCode.SERVER_UNAVAILABLE, str(exc)) from exc
    except FeatureRefusedError as exc:
        raise RpcError(FeatureErrorCode.SERVER_REFUSED, str(exc)) from exc


@registry.method(SERVER_LOG_LIST)
async def server_log_list(svc: Services, params: ServerLogListParams) -> ServerLogListResult:
    logs = svc.features.logs
    entries = logs.entries(
        params.server, min_level=params.min_level, after_seq=params.after_seq, limit=params.limit
    )
    return ServerLogListResult(
        server=params.server,
        level=logs.level(params.server),
        entries=tuple(
            ServerLogEntry(
                seq=e.seq,
                time=e.time,
                level=e.level,
                logger=e.logger,
                text=e.text,
                source=e.source,
            )
            for e in entries
        ),
        dropped=logs.dropped(params.server),
    )


@registry.method(SERVER_LOG_SET_LEVEL)
async def server_log_set_level(
    svc: Services, params: ServerLogSetLevelParams
) -> ServerLogSetLevelResult:
    with _feature_errors():
        sent = await svc.features.set_log_level(params.server, params.level)
    return ServerLogSetLevelResult(
        server=params.server, level=params.level, applied="now" if sent else "next_connection"
    )


@registry.method(RESOURCE_LIST)
async def resource_list(svc: Services, params: ResourceListParams) -> ResourceListResult:
    with _feature_errors():
        resources, templates = await svc.features.resources(params.server)
    return ResourceListResult.model_validate({"resources": resources, "templates": templates})


@registry.method(RESOURCE_READ)
async def resource_read(svc: Services, params: ResourceRef) -> ResourceReadResult:
    with _feature_errors():
        read = await svc.features.read_resource(params.server, params.uri)
    return ResourceReadResult.model_validate(read)


@registry.method(RESOURCE_ATTACH)
async def resource_attach(svc: Services, params: ResourceRef) -> ResourceAttachResult:
    with _feature_errors():
        attached = await svc.features.attach_resource(params.server, params.uri)
    return ResourceAttachResult.model_validate(attached)


@registry.method(RESOURCE_SUBSCRIBE)
async def resource_subscribe(svc: Services, params: ResourceSubscribeParams) -> FeaturesEmpty:
    with _feature_errors():
        await svc.features.subscribe_resource(params.server, params.uri, subscribe=params.subscribe)
    return FeaturesEmpty()


@registry.method(PROMPT_LIST)
async def prompt_list(svc: Services, params: PromptListParams) -> PromptListResult:
    with _feature_errors():
        prompts = await svc.features.prompts(params.server)
    return PromptListResult.model_validate({"prompts": prompts})


@registry.method(PROMPT_GET)
async def prompt_get(svc: Services, params: PromptGetParams) -> PromptGetResult:
    with _feature_errors():
        got = await svc.features.get_prompt(params.server, params.name, params.arguments)
    return PromptGetResult.model_validate(got)
