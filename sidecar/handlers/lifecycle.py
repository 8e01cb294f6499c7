"""initialize, ping, shutdown."""

from __future__ import annotations

from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    INITIALIZE,
    PING,
    SHUTDOWN,
    Empty,
    InitializeParams,
    InitializeResult,
    handshake,
)


@registry.method(INITIALIZE)
async def initialize(svc: Services, params: InitializeParams) -> InitializeResult:
    result = handshake(
        params,
        server_version=svc.version,
        data_dir=str(svc.data_dir),
        model_configured=svc.model_configured(),
    )
    # Connect the MCP servers and load the model stack now that the desktop is talking to us,
    # in the background: the reply to `initialize` does not wait on them.
    svc.warm_up()
    return result


@registry.method(PING)
async def ping(svc: Services, params: Empty) -> Empty:
    del svc, params
    return Empty()


@registry.method(SHUTDOWN)
async def shutdown(svc: Services, params: Empty) -> Empty:
    del params
    svc.shutdown_requested.set()
    return Empty()
