"""Process-health bookkeeping with no Qt: the restart budget and the stderr tail."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class RestartPolicy:
    """Allows at most `max_restarts` automatic restarts within any `window_s` seconds.

    Like jupyter_client's restarter: a sidecar that keeps crashing is given up on rather than
    restarted forever; the author can still start it again by hand.
    """

    def __init__(
        self,
        max_restarts: int = 3,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_restarts = max_restarts
        self.window_s = window_s
        self._clock = clock
        self._restarts: deque[float] = deque()

    def allow_restart(self) -> bool:
        """Record and allow one restart now, or refuse if the budget is spent."""
        now = self._clock()
        while self._restarts and now - self._restarts[0] >= self.window_s:
            self._restarts.popleft()
        if len(self._restarts) >= self.max_restarts:
            return False
        self._restarts.append(now)
        return True

    def reset(self) -> None:
        """Forget past restarts (the author started the process by hand)."""
        self._restarts.clear()


class TailBuffer:
    """Keeps the last `max_bytes` of a byte stream, for showing why a process died."""

    def __init__(self, max_bytes: int = 16_384) -> None:
        self._max = max_bytes
        self._data = bytearray()

    def append(self, data: bytes) -> None:
        self._data += data
        if len(self._data) > self._max:
            del self._data[: len(self._data) - self._max]

    def text(self) -> str:
        """The tail decoded as UTF-8 (a character cut at the front becomes U+FFFD)."""
        return self._data.decode("utf-8", errors="replace")

    def clear(self) -> None:
        self._data.clear()
