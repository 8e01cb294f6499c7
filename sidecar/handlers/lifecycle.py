"""initialize, ping, shutdown."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    INITIALIZE,
    PING,
    PROTOCOL_VERSION,
    SHUTDOWN,
    Empty,
    ErrorCode,
    InitializeParams,
    InitializeResult,
    RpcError,
)


@registry.method(INITIALIZE)
async def initialize(svc: Services, params: InitializeParams) -> InitializeResult:
    major = params.protocol_version.split(".")[0]
    if major != PROTOCOL_VERSION.split(".")[0]:
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            f"protocol {params.protocol_version} is not supported (sidecar speaks "
            f"{PROTOCOL_VERSION})",
        )
    # Connect the MCP servers and load the model stack now that the desktop is talking to us,
    # in the background: the reply to `initialize` does not wait on them.
    svc.warm_up()
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_version=svc.version,
        data_dir=str(svc.data_dir),
        model_configured=svc.model_configured(),
    )


@registry.method(PING)
async def ping(svc: Services, params: Empty) -> Empty:
    del svc, params
    return Empty()


@registry.method(SHUTDOWN)
async def shutdown(svc: Services, params: Empty) -> Empty:
    del params
    svc.shutdown_requested.set()
    return Empty()
