"""The memory parts, built lazily so that start-up does not import LangGraph's store."""

from __future__ import annotations

import asyncio
import importlib
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.context.parts import MemoryDeps
    from sidecar.store import Store


class LazyMemory:
    """The memory parts, built on first use on the event loop (after LangGraph's store module
    was imported in a worker thread, so start-up stays free of it). Worker threads that need
    them (an in-process server's factory) wait until they exist."""

    def __init__(self, store: Store, window: int | None = None) -> None:
        self._store = store
        self._window = window
        self._deps: MemoryDeps | None = None
        self._ready = threading.Event()

    async def get(self) -> MemoryDeps:
        if self._deps is None:
            await asyncio.to_thread(importlib.import_module, "langgraph.store.sqlite")
        if self._deps is None:
            from sidecar.context.parts import build_memory_deps

            self._deps = build_memory_deps(self._store, self._window)
            self._ready.set()
        return self._deps

    def wait(self, timeout_s: float = 120.0) -> MemoryDeps:
        """Blocking (worker threads only).

        Raises:
            TimeoutError: the memory parts were not built in time.
        """
        if not self._ready.wait(timeout_s) or self._deps is None:
            raise TimeoutError("the memory store was not opened in time")
        return self._deps
