"""Error codes the desktop client produces itself, for requests the sidecar never answered.

They sit outside JSON-RPC's reserved range (-32768..-32000), so they cannot clash with the
sidecar's own codes in `sidecar.protocol.ErrorCode`.
"""

from __future__ import annotations

from enum import IntEnum

from sidecar.protocol import ErrorObject


class ClientErrorCode(IntEnum):
    """Why a request failed on the desktop's side of the pipe."""

    SIDECAR_EXITED = -31001
    """The sidecar process ended while the request was in flight."""
    NOT_CONNECTED = -31002
    """No sidecar is running and none is being started (stopped, or restarts gave up)."""
    INVALID_RESULT = -31003
    """The sidecar replied with a result that does not match the method's result model."""


def client_error(code: ClientErrorCode, message: str, data: object = None) -> ErrorObject:
    """Build the `ErrorObject` a pending request fails with."""
    return ErrorObject(code=int(code), message=message, data=data)
