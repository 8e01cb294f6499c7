"""Per-server logs: the server's `notifications/message` and the host's notes on its traffic.

Each server gets a bounded buffer (oldest entries fall out, counted in `dropped`) and a level
the author chose for it. The level is asked of the server (`logging/setLevel` on 2025-era
connections, a per-request opt-in on 2026-07-28 ones); the buffer keeps whatever arrives.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

LogLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
LEVELS: tuple[LogLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
DEFAULT_CAPACITY = 1000
MAX_TEXT = 4000


@dataclass(frozen=True, slots=True)
class ServerLogRecord:
    seq: int
    time: float
    level: LogLevel
    logger: str | None
    text: str
    source: Literal["server", "host"]


def severity(level: LogLevel) -> int:
    return LEVELS.index(level)


def as_level(value: object) -> LogLevel:
    """A level from the wire; anything unknown counts as `info`."""
    for level in LEVELS:
        if value == level:
            return level
    return "info"


def render(data: Any) -> str:
    """A log notification's `data` (any JSON) as one bounded line of text."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


class _Buffer:
    def __init__(self, capacity: int) -> None:
        self.entries: deque[ServerLogRecord] = deque(maxlen=capacity)
        self.next_seq = 0

    @property
    def dropped(self) -> int:
        return self.next_seq - len(self.entries)


class ServerLogs:
    """Log buffers and chosen levels, by server name. Buffers outlive reconnections, so a
    crashed server's last words stay readable."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._capacity = capacity
        self._buffers: dict[str, _Buffer] = {}
        self._levels: dict[str, LogLevel] = {}
        self._listeners: list[Callable[[str, ServerLogRecord], None]] = []

    def subscribe(self, listener: Callable[[str, ServerLogRecord], None]) -> Callable[[], None]:
        """Hear each new entry as (server, entry), e.g. to push it to a logs panel; returns a
        function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add(
        self,
        server: str,
        level: LogLevel,
        text: str,
        *,
        logger: str | None = None,
        source: Literal["server", "host"] = "server",
    ) -> ServerLogRecord:
        buffer = self._buffers.get(server)
        if buffer is None:
            buffer = self._buffers[server] = _Buffer(self._capacity)
        entry = ServerLogRecord(buffer.next_seq, time.time(), level, logger, text, source)
        buffer.next_seq += 1
        buffer.entries.append(entry)
        for listener in list(self._listeners):
            listener(server, entry)
        return entry

    def entries(
        self, server: str, *, min_level: LogLevel = "debug", after_seq: int = -1, limit: int = 500
    ) -> list[ServerLogRecord]:
        """The newest `limit` entries at or above `min_level` with `seq > after_seq`."""
        buffer = self._buffers.get(server)
        if buffer is None:
            return []
        floor = severity(min_level)
        picked = [e for e in buffer.entries if e.seq > after_seq and severity(e.level) >= floor]
        return picked[-limit:]

    def dropped(self, server: str) -> int:
        buffer = self._buffers.get(server)
        return buffer.dropped if buffer is not None else 0

    def level(self, server: str) -> LogLevel | None:
        return self._levels.get(server)

    def set_level(self, server: str, level: LogLevel) -> None:
        self._levels[server] = level
