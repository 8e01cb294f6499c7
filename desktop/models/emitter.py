"""`Emitter`: a tiny Qt-free signal, so the pure models can announce changes (napari-style)."""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any, Generic, ParamSpec

P = ParamSpec("P")


class Emitter(Generic[P]):
    """Calls connected callbacks synchronously, in connection order.

    Bound methods are held weakly, so a view that goes away stops receiving calls without having
    to disconnect; plain functions and other callables are held strongly.
    """

    def __init__(self) -> None:
        self._slots: list[Callable[..., Any] | weakref.WeakMethod[Callable[..., Any]]] = []

    def connect(self, slot: Callable[P, Any]) -> None:
        if inspect.ismethod(slot):
            self._slots.append(weakref.WeakMethod(slot))
        else:
            self._slots.append(slot)

    def disconnect(self, slot: Callable[P, Any]) -> None:
        """Remove one connection of `slot`; unknown slots are ignored."""
        for i, held in enumerate(self._slots):
            target = held() if isinstance(held, weakref.WeakMethod) else held
            if target == slot:
                del self._slots[i]
                return

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for held in list(self._slots):
            if isinstance(held, weakref.WeakMethod):
                target = held()
                if target is None:
                    self._slots.remove(held)
                    continue
                target(*args, **kwargs)
            else:
                held(*args, **kwargs)
