"""Lanes: every run takes a slot in one lane before it starts, each lane with its own cap.

`main` carries the author's own turns, `cron` scheduled and heartbeat runs, `subagent` work
handed off by a turn. A full `cron` lane makes scheduled runs wait for each other, never for
the author's turns: the lanes share nothing but the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager

LANES: tuple[str, ...] = ("main", "subagent", "cron")
# Subagent tasks are also capped per profile (its `concurrency`); the lane caps them together.
DEFAULT_CAPS: Mapping[str, int] = {"main": 4, "subagent": 64, "cron": 1}


class UnknownLaneError(ValueError):
    """A run asked for a lane that does not exist."""


class Lanes:
    """Concurrency caps per lane, read on every acquire (settings may change meanwhile)."""

    def __init__(self, caps: Callable[[], Mapping[str, int]] = lambda: DEFAULT_CAPS) -> None:
        self._caps = caps
        self._running: dict[str, int] = dict.fromkeys(LANES, 0)
        self._waiting: dict[str, int] = dict.fromkeys(LANES, 0)
        self._changed = asyncio.Condition()

    def cap(self, lane: str) -> int:
        return max(1, int(self._caps().get(lane, DEFAULT_CAPS[lane])))

    def running(self, lane: str) -> int:
        return self._running[lane]

    def waiting(self, lane: str) -> int:
        return self._waiting[lane]

    @asynccontextmanager
    async def slot(self, lane: str) -> AsyncGenerator[None]:
        """Hold one slot of `lane` for the body; waits while the lane is full.

        Raises:
            UnknownLaneError: not one of LANES.
        """
        if lane not in self._running:
            raise UnknownLaneError(f"unknown lane {lane!r}; lanes are {', '.join(LANES)}")
        async with self._changed:
            self._waiting[lane] += 1
            try:
                await self._changed.wait_for(lambda: self._running[lane] < self.cap(lane))
            finally:
                self._waiting[lane] -= 1
            self._running[lane] += 1
        try:
            yield
        finally:
            self._running[lane] -= 1
            await self._release()

    async def _release(self) -> None:
        # A cancelled run still frees its slot: shield the notify from the cancellation.
        async def notify() -> None:
            async with self._changed:
                self._changed.notify_all()

        await asyncio.shield(notify())

    async def caps_changed(self) -> None:
        """Wake the waiters after a cap was raised."""
        async with self._changed:
            self._changed.notify_all()
