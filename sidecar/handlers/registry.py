"""The handler table: every method of `sidecar.protocol.METHODS` gets exactly one handler.

Bound handlers answer a write that found no room (a full disk, anywhere in the handler) with
`DISK_FULL` and the folder, instead of the dispatcher's "internal error": whatever the handler
wrote in a transaction was rolled back, so the author can free space and retry."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from sidecar.handlers.services import Services
from sidecar.protocol import METHODS, ErrorCode, RpcError, WireModel, disk_full_message
from sidecar.store.disk import full_disk_folder

P = TypeVar("P", bound=BaseModel)
HandlerFn = Callable[[Services, Any], Awaitable[WireModel]]


@dataclass(frozen=True, slots=True)
class BoundHandler:
    params: type[BaseModel]
    handler: Callable[[Any], Awaitable[WireModel]]


class Registry:
    def __init__(self) -> None:
        self.handlers: dict[str, HandlerFn] = {}

    def method(self, name: str) -> Callable[[HandlerFn], HandlerFn]:
        """Register the handler of a declared method.

        Raises:
            KeyError: the method is not declared in the protocol.
            ValueError: the method already has a handler.
        """
        if name not in METHODS:
            raise KeyError(f"{name!r} is not a declared method")

        def register(fn: HandlerFn) -> HandlerFn:
            if name in self.handlers:
                raise ValueError(f"{name!r} already has a handler")
            self.handlers[name] = fn
            return fn

        return register

    def bind(self, services: Services) -> dict[str, BoundHandler]:
        return {
            name: BoundHandler(
                METHODS[name].params, _disk_full_typed(functools.partial(fn, services), services)
            )
            for name, fn in self.handlers.items()
        }


def _disk_full_typed(
    handler: Callable[[Any], Awaitable[WireModel]], services: Services
) -> Callable[[Any], Awaitable[WireModel]]:
    async def call(params: Any) -> WireModel:
        try:
            return await handler(params)
        except RpcError:
            raise
        except Exception as exc:  # re-raised unless it is a full disk: the dispatcher's own
            folder = full_disk_folder(exc, services.data_dir)
            if folder is None:
                raise
            raise RpcError(
                ErrorCode.DISK_FULL, disk_full_message(str(folder)), {"folder": str(folder)}
            ) from exc

    return call


registry = Registry()
