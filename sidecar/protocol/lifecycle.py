"""The session's lifecycle: `initialize` (the handshake, which negotiates the protocol version,
kept apart from the package version), `ping` and `shutdown`.
"""

from __future__ import annotations

from sidecar.protocol.jsonrpc import ErrorCode, RpcError
from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty
from sidecar.protocol.models_base import WireModel

PROTOCOL_VERSION = "1.0"


class InitializeParams(WireModel):
    client_name: str
    client_version: str = ""
    protocol_version: str = PROTOCOL_VERSION


class InitializeResult(WireModel):
    protocol_version: str
    server_version: str
    data_dir: str
    model_configured: bool


def handshake(
    params: InitializeParams, *, server_version: str, data_dir: str, model_configured: bool
) -> InitializeResult:
    """The reply to `initialize` (given by its handler, and by the sidecar's start-up before the
    handlers are loaded: `sidecar.startup`).

    Raises:
        RpcError: `INVALID_PARAMS`, the client speaks another major version of the protocol.
    """
    major = params.protocol_version.split(".", maxsplit=1)[0]
    if major != PROTOCOL_VERSION.split(".", maxsplit=1)[0]:
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            f"protocol {params.protocol_version} is not supported (sidecar speaks "
            f"{PROTOCOL_VERSION})",
        )
    return InitializeResult(
        protocol_version=PROTOCOL_VERSION,
        server_version=server_version,
        data_dir=data_dir,
        model_configured=model_configured,
    )


INITIALIZE = "initialize"
PING = "ping"
SHUTDOWN = "shutdown"

LIFECYCLE_METHODS: dict[str, MethodSpec] = {
    INITIALIZE: MethodSpec(InitializeParams, InitializeResult, "Handshake; first request."),
    PING: MethodSpec(Empty, Empty, "Liveness check."),
    SHUTDOWN: MethodSpec(Empty, Empty, "Stop runs, close servers, exit after replying."),
}
