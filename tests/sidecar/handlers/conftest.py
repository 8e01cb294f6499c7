"""Handler tests call a method's handler as the RPC server binds it, on real services."""

from __future__ import annotations

from typing import TypeVar

from sidecar.handlers.services import Services
from sidecar.handlers.table import load_all
from sidecar.protocol import WireModel

R = TypeVar("R", bound=WireModel)


async def call(svc: Services, method: str, params: WireModel, result: type[R]) -> R:
    """Call the handler registered for `method`, as the RPC server would."""
    reply = await load_all().bind(svc)[method].handler(params)
    assert isinstance(reply, result)
    return reply
