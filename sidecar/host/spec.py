"""What the supervisor is told about a server (its spec, its restart policy) and what it
reports (its status)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from sidecar.host.config import ServerConfig
from sidecar.host.launch import Launch, Target

ServerState = Literal["starting", "ready", "degraded", "crashed", "backoff", "stopped", "disabled"]
Transport = Literal["inprocess", "stdio", "http"]


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one server and how to treat it. `target` is called in a worker thread, so
    heavy imports, keyring reads and PATH lookups stay off the event loop."""

    name: str
    target: Callable[[], Target | Launch]
    trusted: bool = True
    builtin: bool = True
    enabled: bool = True
    required: bool = False
    timeout_s: float = 1800.0
    idle_timeout_s: float | None = None
    transport: Transport = "inprocess"
    config: ServerConfig | None = None

    def tool_allowed(self, tool: str) -> bool:
        return self.config is None or self.config.tool_allowed(tool)


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """Exponential backoff `base_s * 2**n` capped at `cap_s`; the attempt count resets after a
    session stayed up `stable_s`; after `max_attempts` crashes in a row it gives up."""

    base_s: float = 0.5
    cap_s: float = 30.0
    max_attempts: int = 8
    stable_s: float = 30.0
    start_timeout_s: float = 60.0

    def delay(self, attempt: int) -> float:
        return min(self.base_s * 2**attempt, self.cap_s)


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """A snapshot for the desktop's servers panel."""

    name: str
    state: ServerState
    error: str | None
    tool_count: int
    trusted: bool
    enabled: bool
    builtin: bool
    required: bool
    transport: Transport
    restarts: int
    retry_in_s: float | None
    config: ServerConfig | None
    pid: int | None = None
    since: float = field(default_factory=time.time)


class RequiredServerError(RuntimeError):
    """A server marked `required` is not connected, so no turn can run until it is."""


class ServerUnavailableError(RuntimeError):
    """The server is not connected (failed to start, died, stopped or disabled)."""


StatusListener = Callable[[ServerStatus], None]
