"""Runs the agents server keeps: one controller per run, driven in the registry's task group.

A run outlives the MCP request that started it: on the 2026-07-28 protocol a permission
question ends the request (input required) and the client's retry picks the run up again, and
`agent_status` / `agent_cancel` reach it from other requests. The registry belongs to one
server connection (the server's lifespan); closing it interrupts every run still going and
waits until each CLI's process group is gone.

Each run forwards its controller's events to one queue that the attached request reads; while
no request is attached (between the rounds of an input-required exchange) events wait there. The
queue is bounded (`EVENT_BUFFER`): when it is full the run stops reading its CLI, whose output
then waits in the pipe (back-pressure instead of unbounded memory). A stopped run that nobody
follows no longer queues events: its result says how it ended.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Literal, Self, TypeAlias

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import BaseModel, ConfigDict, JsonValue

from mcp_servers.agents.controllers.base import AgentController
from mcp_servers.agents.errors import ControllerError, NoRunError
from mcp_servers.agents.events import (
    AgentEvent,
    PermissionRequest,
    SessionStarted,
    StateHint,
    ToolCall,
    UsageReported,
)
from mcp_servers.agents.requests import (
    MessageReceipt,
    PermissionDecision,
    ResumeRequest,
    StartRequest,
)
from mcp_servers.agents.results import (
    ErrorCode,
    NormalizedError,
    OperatorResult,
    Provider,
    RunMetrics,
)

logger = logging.getLogger(__name__)

EVENT_BUFFER = 1024
"""Events a run queues for its follower before it stops reading its CLI."""

RunPhase = Literal["starting", "running", "awaiting_permission", "finished"]
Sequenced: TypeAlias = tuple[int, AgentEvent]
"""An event with its 1-based position in the run."""
ControllerFactory = Callable[[Provider, str], AgentController]
"""Builds a fresh controller for a provider and the executable to run."""


class RunBusyError(Exception):
    """Another request is already following this run."""


class UnknownRunError(KeyError):
    """No run with this id on this connection."""


class RunStatus(BaseModel):
    """What `agent_status` and `agent_cancel` report about a run.

    `metrics` are those known so far (tool calls counted from events, elapsed time); the
    CLI's token and cost figures arrive with the final `result`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    provider: Provider
    phase: RunPhase
    started_at: datetime
    elapsed_s: float
    events: int
    native_session_id: str | None = None
    last_event: dict[str, JsonValue] | None = None
    pending_permissions: list[dict[str, JsonValue]] = []
    cancel_requested: bool = False
    metrics: RunMetrics
    result: OperatorResult | None = None


@dataclass
class AgentRun:
    """One controller run and what the server has seen of it."""

    run_id: str
    provider: Provider
    controller: AgentController
    request: StartRequest
    send: MemoryObjectSendStream[Sequenced]
    receive: MemoryObjectReceiveStream[Sequenced]
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    started_clock: float = field(default_factory=anyio.current_time)
    last_activity: float = field(default_factory=anyio.current_time)
    finished_clock: float | None = None
    events: int = 0
    tool_calls: int = 0
    last_event: AgentEvent | None = None
    native_session_id: str | None = None
    pending: dict[str, PermissionRequest] = field(default_factory=dict[str, PermissionRequest])
    result: OperatorResult | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    attached: bool = False
    reattached: anyio.Event = field(default_factory=anyio.Event)
    cancel_requested: bool = False

    @property
    def elapsed_s(self) -> float:
        """Seconds the run has been going (its whole duration once finished)."""
        end = self.finished_clock if self.finished_clock is not None else anyio.current_time()
        return end - self.started_clock

    @property
    def phase(self) -> RunPhase:
        """Where the run is, as far as its events tell."""
        if self.result is not None:
            return "finished"
        if self.pending:
            return "awaiting_permission"
        return "running" if self.native_session_id or self.events else "starting"

    def record(self, event: AgentEvent) -> None:
        """Update the run's view from one controller event and queue it for the follower."""
        self.events += 1
        if not isinstance(event, UsageReported):  # a count of tokens, not something it did
            self.last_event = event
        self.last_activity = anyio.current_time()
        if isinstance(event, SessionStarted):
            self.native_session_id = event.session_id
        elif isinstance(event, ToolCall):
            self.tool_calls += 1
        elif isinstance(event, PermissionRequest):
            self.pending[event.request_id] = event
        elif isinstance(event, StateHint) and event.hint.startswith("permission_"):
            self.pending.pop(str(event.detail.get("request_id")), None)

    async def deliver(self, event: AgentEvent) -> None:
        """Record `event`, then queue it for the follower, waiting while the queue is full."""
        self.record(event)
        item = (self.events, event)
        if self.cancel_requested and not self.attached:
            with contextlib.suppress(anyio.WouldBlock):
                self.send.send_nowait(item)
            return
        await self.send.send(item)

    def _unblock_sender(self) -> None:
        """Drop what a stopped, unfollowed run has queued, so its driver can reach its end."""
        if self.attached:
            return
        while True:
            try:
                self.receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return

    def finish(self, result: OperatorResult) -> None:
        """Record the final result and close the event queue (the follower drains it)."""
        self.result = result
        self.finished_clock = anyio.current_time()
        self.pending.clear()
        self.send.close()
        self.done.set()

    async def answer(self, request_id: str, decision: PermissionDecision) -> bool:
        """Answer a pending permission request; False if it is no longer pending."""
        if request_id not in self.pending:
            return False
        self.pending.pop(request_id, None)
        try:
            await self.controller.answer_permission(request_id, decision)
        except ControllerError:  # cancelled by the CLI, or the run ended meanwhile
            return False
        return True

    async def send_message(self, text: str) -> MessageReceipt:
        """Hand `text` to the running agent (`AgentController.send_message`).

        Raises:
            NoRunError: the run has finished, or is ending.
            InputUnsupportedError: its CLI takes no input mid-run.
        """
        if self.done.is_set():
            raise NoRunError(f"run {self.run_id} has finished")
        return await self.controller.send_message(text)

    async def stop(self, wait_s: float) -> None:
        """Interrupt the run and wait up to `wait_s` for it to end (CLI stopped, group gone)."""
        self.cancel_requested = True
        self._unblock_sender()
        if not self.done.is_set():
            # NoRunError: not launched yet, and the driver's exit stops it.
            with contextlib.suppress(NoRunError):
                await self.controller.interrupt()
        with anyio.move_on_after(wait_s):
            await self.done.wait()

    @asynccontextmanager
    async def follow(self) -> AsyncGenerator[Self]:
        """Be the one request reading this run's events.

        Raises:
            RunBusyError: another request is following the run.
        """
        if self.attached:
            raise RunBusyError(self.run_id)
        self.attached = True
        self.reattached.set()
        try:
            yield self
        finally:
            self.attached = False
            self.reattached = anyio.Event()

    def status(self) -> RunStatus:
        """A snapshot for `agent_status`."""
        last = self.last_event.model_dump(mode="json") if self.last_event else None
        pending = [p.model_dump(mode="json") for p in self.pending.values()]
        metrics = (
            self.result.metrics
            if self.result is not None
            else RunMetrics(duration_ms=int(self.elapsed_s * 1000), tool_calls=self.tool_calls)
        )
        return RunStatus(
            run_id=self.run_id,
            provider=self.provider,
            phase=self.phase,
            started_at=self.started_at,
            elapsed_s=round(self.elapsed_s, 3),
            events=self.events,
            native_session_id=self.native_session_id,
            last_event=last,
            pending_permissions=pending,
            cancel_requested=self.cancel_requested,
            metrics=metrics,
            result=self.result,
        )


class RunRegistry:
    """Starts, finds and stops the runs of one server connection (use with `async with`)."""

    def __init__(
        self,
        factory: ControllerFactory,
        executable_for: Callable[[Provider], str],
        *,
        unattended_timeout_s: float = 900.0,
        shutdown_grace_s: float = 20.0,
        keep_finished: int = 100,
    ) -> None:
        self._factory = factory
        self._executable_for = executable_for
        self._unattended_timeout_s = unattended_timeout_s
        self._shutdown_grace_s = shutdown_grace_s
        self._keep_finished = keep_finished
        self._runs: dict[str, AgentRun] = {}
        self._group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is None:
            return
        # Interrupt politely first (Claude Code saves its session), then cancel: each
        # driver's `async with controller` kills and reaps what is left of its CLI.
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as stops:
                for run in self._runs.values():
                    if not run.done.is_set():
                        stops.start_soon(run.stop, self._shutdown_grace_s)
        group.cancel_scope.cancel()
        try:
            await group.__aexit__(exc_type, exc, tb)
        finally:
            for run in self._runs.values():
                run.receive.close()

    def get(self, run_id: str) -> AgentRun:
        """The run with this id.

        Raises:
            UnknownRunError: no such run on this connection.
        """
        run = self._runs.get(run_id)
        if run is None:
            raise UnknownRunError(run_id)
        return run

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._runs

    async def launch(self, provider: Provider, request: StartRequest) -> AgentRun:
        """Start a run (a resume if `request` is a `ResumeRequest`); returns once it is launched.

        Raises:
            RuntimeError: the registry is not open.
        """
        if self._group is None:
            raise RuntimeError("the run registry is not open")
        controller = self._factory(provider, self._executable_for(provider))
        send, receive = anyio.create_memory_object_stream[Sequenced](EVENT_BUFFER)
        run = AgentRun(
            run_id=request.run_id,
            provider=provider,
            controller=controller,
            request=request,
            send=send,
            receive=receive,
        )
        self._forget_old_runs()
        self._runs[run.run_id] = run
        await self._group.start(self._drive, run)
        return run

    def _forget_old_runs(self) -> None:
        """Drop the oldest finished runs beyond `keep_finished` (their traces stay on disk)."""
        finished = [r for r in self._runs.values() if r.done.is_set() and not r.attached]
        for run in finished[: max(0, len(finished) - self._keep_finished)]:
            del self._runs[run.run_id]
            run.receive.close()

    def expire_unless_followed(self, run: AgentRun) -> None:
        """Interrupt `run` if no request follows it again within the unattended timeout."""
        if self._group is not None:
            self._group.start_soon(self._expire, run, run.reattached)

    async def _expire(self, run: AgentRun, reattached: anyio.Event) -> None:
        with anyio.move_on_after(self._unattended_timeout_s):
            await _first(reattached, run.done)
            return
        if not run.attached and not run.done.is_set():
            logger.warning("run %s abandoned while awaiting an answer; interrupting", run.run_id)
            await run.stop(0)

    async def _drive(
        self, run: AgentRun, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        result: OperatorResult | None = None
        started = False
        try:
            async with run.controller as controller:
                if isinstance(run.request, ResumeRequest):
                    await controller.resume(run.request)
                else:
                    await controller.start(run.request)
                task_status.started()
                started = True
                async for event in controller.stream():
                    await run.deliver(event)
                result = await controller.wait()
        except Exception as exc:  # task boundary: a failing controller must still end the run
            logger.exception("run %s crashed", run.run_id)
            result = _crashed(run, exc)
        finally:
            result = result or run.controller.result or _crashed(run, None)
            run.finish(result)
            if not started:
                task_status.started()


async def _first(*events: anyio.Event) -> None:
    """Return once any of `events` is set."""
    async with anyio.create_task_group() as group:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            group.cancel_scope.cancel()

        for event in events:
            group.start_soon(wait, event)


def _crashed(run: AgentRun, exc: BaseException | None) -> OperatorResult:
    message = f"{type(exc).__name__}: {exc}" if exc else "the run ended without a result"
    return OperatorResult(
        run_id=run.run_id,
        provider=run.provider,
        status="failed" if exc or not run.cancel_requested else "interrupted",
        error=NormalizedError(code=ErrorCode.INTERNAL_ERROR, message=message),
    )
