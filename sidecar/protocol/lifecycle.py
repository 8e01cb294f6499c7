"""The session's lifecycle: `initialize` (the handshake, which negotiates the protocol version,
kept apart from the package version), `ping` and `shutdown`.
"""

from __future__ import annotations

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


INITIALIZE = "initialize"
PING = "ping"
SHUTDOWN = "shutdown"

LIFECYCLE_METHODS: dict[str, MethodSpec] = {
    INITIALIZE: MethodSpec(InitializeParams, InitializeResult, "Handshake; first request."),
    PING: MethodSpec(Empty, Empty, "Liveness check."),
    SHUTDOWN: MethodSpec(Empty, Empty, "Stop runs, close servers, exit after replying."),
}
