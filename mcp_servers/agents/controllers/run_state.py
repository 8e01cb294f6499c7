"""Mutable state of one controller run and the small waiting helpers the driver uses."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_servers.agents.events import AgentEvent, PermissionRequest, StateHint
from mcp_servers.agents.parsers.base import StreamParser
from mcp_servers.agents.parsers.outcome import StopReason
from mcp_servers.agents.process import AgentProcess
from mcp_servers.agents.requests import StartRequest
from mcp_servers.agents.results import Attempt, NormalizedError, OperatorResult
from mcp_servers.agents.traces import TraceWriter


@dataclass
class RunState:
    """Everything the driver, the pump and the public methods share about the current run."""

    request: StartRequest
    parser: StreamParser
    trace: TraceWriter
    send: MemoryObjectSendStream[AgentEvent]
    receive: MemoryObjectReceiveStream[AgentEvent]
    started_at: float = field(default_factory=anyio.current_time)
    last_activity: float = field(default_factory=anyio.current_time)
    done: anyio.Event = field(default_factory=anyio.Event)
    stop_requested: anyio.Event = field(default_factory=anyio.Event)
    stop_reason: StopReason | None = None
    pending: dict[str, PermissionRequest] = field(default_factory=dict[str, PermissionRequest])
    proc: AgentProcess | None = None
    attempts: list[Attempt] = field(default_factory=list[Attempt])
    notes: list[str] = field(default_factory=list[str])
    fatal_error: NormalizedError | None = None
    exit_code: int | None = None
    stderr_tail: str = ""
    result: OperatorResult | None = None
    streamed: bool = False

    def touch(self) -> None:
        """Record CLI activity (resets the idle clock)."""
        self.last_activity = anyio.current_time()

    def remaining_s(self) -> float | None:
        """Seconds left before the run's timeout, or None without a timeout."""
        if self.request.timeout_s is None:
            return None
        return max(0.0, self.started_at + self.request.timeout_s - anyio.current_time())

    def request_stop(self, reason: StopReason) -> None:
        """Ask the driver to stop the CLI; the first reason given wins."""
        if self.stop_reason is None and not self.done.is_set():
            self.stop_reason = reason
            self.stop_requested.set()

    def emit(self, event: AgentEvent) -> None:
        """Track pending permissions, write the normalized trace and pass the event upward."""
        if isinstance(event, PermissionRequest):
            self.pending[event.request_id] = event
        elif isinstance(event, StateHint) and event.hint == "permission_cancelled":
            self.pending.pop(str(event.detail.get("request_id")), None)
        self.trace.write_event(event)
        # If nobody listens any more, the trace still has the event.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.send.send_nowait(event)


@dataclass
class AttemptIO:
    """One spawned process with its parser and the signals its pump raises."""

    proc: AgentProcess
    parser: StreamParser
    stdout_done: anyio.Event = field(default_factory=anyio.Event)
    stderr_done: anyio.Event = field(default_factory=anyio.Event)
    terminal: anyio.Event = field(default_factory=anyio.Event)


def new_event_stream() -> tuple[
    MemoryObjectSendStream[AgentEvent], MemoryObjectReceiveStream[AgentEvent]
]:
    """An unbounded event channel: the driver never blocks on a slow consumer."""
    return anyio.create_memory_object_stream[AgentEvent](math.inf)


async def first_of(events: Mapping[str, anyio.Event], timeout_s: float | None) -> str | None:
    """The name of the first event set, or None if `timeout_s` passed first."""
    for name, event in events.items():
        if event.is_set():
            return name
    winner: list[str] = []
    with anyio.move_on_after(timeout_s):
        async with anyio.create_task_group() as group:
            for name, event in events.items():
                group.start_soon(_wait_named, event, name, winner, group.cancel_scope)
    return winner[0] if winner else None


async def _wait_named(
    event: anyio.Event, name: str, winner: list[str], scope: anyio.CancelScope
) -> None:
    await event.wait()
    winner.append(name)
    scope.cancel()


async def wait_event(event: anyio.Event, timeout_s: float) -> bool:
    """Wait up to `timeout_s` for `event`; True if it was set."""
    with anyio.move_on_after(timeout_s):
        await event.wait()
    return event.is_set()
