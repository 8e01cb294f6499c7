"""Time for the scheduler and the heartbeat, injectable so tests never sleep.

`SystemClock(offset)` is the wall clock shifted by `offset` seconds (`ATRIUM_CLOCK_OFFSET`, for
tests that need "the sidecar was dead for an hour"); tests of the scheduler itself drive a
`ManualClock` forward by hand.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float, wake: asyncio.Event) -> None:
        """Return after `seconds` (of this clock), or as soon as `wake` is set."""
        ...


class SystemClock:
    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset

    def now(self) -> float:
        return time.time() + self.offset

    async def sleep(self, seconds: float, wake: asyncio.Event) -> None:
        try:
            async with asyncio.timeout(max(0.0, seconds)):
                await wake.wait()
        except TimeoutError:
            pass


class ManualClock:
    """A clock that moves only when told; sleepers wake when it passes their deadline."""

    def __init__(self, start: float) -> None:
        self._now = start
        self._tick = asyncio.Event()

    def now(self) -> float:
        return self._now

    def advance_to(self, when: float) -> None:
        self._now = max(self._now, when)
        tick, self._tick = self._tick, asyncio.Event()
        tick.set()

    async def sleep(self, seconds: float, wake: asyncio.Event) -> None:
        deadline = self._now + seconds
        while self._now < deadline and not wake.is_set():
            waits = {asyncio.ensure_future(wake.wait()), asyncio.ensure_future(self._tick.wait())}
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
