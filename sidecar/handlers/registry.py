"""The handler table: every method of `sidecar.protocol.METHODS` gets exactly one handler."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from sidecar.handlers.services import Services
from sidecar.protocol import METHODS, WireModel

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
            name: BoundHandler(METHODS[name].params, functools.partial(fn, services))
            for name, fn in self.handlers.items()
        }


registry = Registry()
