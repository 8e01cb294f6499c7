"""The run<->call binding: which run owns a server's in-flight tool call, so a server request
can reach its author.

An elicitation or sampling request arrives on the server's session while one of its tools is
running inside the graph's tool node. It cannot be a LangGraph interrupt (the node is mid-call),
so the host asks the author a *live* interrupt instead, on behalf of the run that made the call.

The pieces:

- the runtime binds each run's task to a `RunBinding` (`bind_run`), which knows the run and how
  to ask its author (`AskAuthor`, provided by `sidecar.runtime.live`);
- the tool node wraps each call in `in_flight(server, call_id)`, registering an `InFlightCall`
  under the server's name in the shared `InFlightCalls` registry;
- the client-feature callbacks look the server's call up (`InFlightCalls.owner`) and ask.

Callbacks of 2025-era sessions run in the session's own task, so the registry is keyed by
server; on 2026-07-28 sessions they run in the caller's task and `current_call()` is exact.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Generator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

AnswerCheck = Callable[[dict[str, Any]], str | None]
"""Checks an answer before it is accepted; returns what is wrong with it, or None."""


class LiveInterruptDropped(Exception):
    """The call (or its run) ended before the author answered."""


class PausableDeadline(Protocol):
    """A call's idle limit that can wait while the author answers (see `deadline.IdleDeadline`).

    Declared here, not imported, so the binding does not depend on how deadlines are kept."""

    def paused(self) -> AbstractContextManager[None]: ...


class AskAuthor(Protocol):
    """Raise a live interrupt for `call` and wait for the author's (validated) answer.

    Raises:
        LiveInterruptDropped: the call ended first.
    """

    async def __call__(
        self, call: InFlightCall | None, payload: Mapping[str, object], check: AnswerCheck | None
    ) -> dict[str, Any]: ...


@dataclass(eq=False)
class RunBinding:
    """A running turn as the host sees it: whose calls these are and how to ask its author."""

    thread_id: str
    run_id: str
    calls: InFlightCalls
    ask: AskAuthor


@dataclass(eq=False)
class InFlightCall:
    """One tool call between its request and its result."""

    server: str
    call_id: str
    run: RunBinding
    deadline: PausableDeadline | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    task_id: str | None = None
    """The subagent task making the call (server requests may arrive in another task)."""

    async def ask(
        self, payload: Mapping[str, object], check: AnswerCheck | None = None
    ) -> dict[str, Any]:
        """Ask the author on this call's behalf; the call's idle limit waits meanwhile.

        Raises:
            LiveInterruptDropped: the call ended before the answer came.
        """
        with self.waiting_on_author():
            return await self.run.ask(self, payload, check)

    @contextmanager
    def waiting_on_author(self) -> Generator[None]:
        deadline = self.deadline
        if deadline is None:
            yield
            return
        with deadline.paused():
            yield


class InFlightCalls:
    """The calls in flight, by server (oldest first)."""

    def __init__(self) -> None:
        self._by_server: dict[str, list[InFlightCall]] = {}

    def begin(self, call: InFlightCall) -> None:
        self._by_server.setdefault(call.server, []).append(call)

    def end(self, call: InFlightCall) -> None:
        calls = self._by_server.get(call.server, [])
        if call in calls:
            calls.remove(call)
        if not calls:
            self._by_server.pop(call.server, None)
        call.done.set()

    def owner(self, server: str) -> InFlightCall | None:
        """The call a request from `server` belongs to: the caller's own call when the request
        runs in the caller's task, else the server's only call in flight. With several calls
        on one server (threads in parallel) the newest is the best guess; that is logged."""
        mine = current_call()
        if mine is not None and mine.server == server:
            return mine
        calls = self._by_server.get(server, [])
        if len(calls) > 1:
            log.warning(
                "%d calls in flight on %s; a request from it goes to the newest", len(calls), server
            )
        return calls[-1] if calls else None

    def servers(self) -> list[str]:
        return list(self._by_server)


_RUN: ContextVar[RunBinding | None] = ContextVar("atrium_run_binding", default=None)
_CALL: ContextVar[InFlightCall | None] = ContextVar("atrium_in_flight_call", default=None)
_TASK: ContextVar[str | None] = ContextVar("atrium_subagent_task", default=None)


def current_run() -> RunBinding | None:
    """The run this task belongs to (see `bind_run`)."""
    return _RUN.get()


def current_task() -> str | None:
    """The subagent task this code runs for (see `task_scope`); None: the main agent."""
    return _TASK.get()


def fresh_context(task_id: str) -> contextvars.Context:
    """An empty context carrying only this run's binding and the task: a subagent's own graph
    runs in it, so nothing of the parent graph's configuration leaks into the child."""
    context = contextvars.Context()
    context.run(_RUN.set, _RUN.get())
    context.run(_TASK.set, task_id)
    return context


@contextmanager
def task_scope(task_id: str) -> Generator[None]:
    """Mark work done for a subagent task, so what it asks the author names the task."""
    token = _TASK.set(task_id)
    try:
        yield
    finally:
        _TASK.reset(token)


def current_call() -> InFlightCall | None:
    """The call being made in this task, if inside `in_flight(...)`."""
    return _CALL.get()


@contextmanager
def bind_run(binding: RunBinding | None) -> Generator[None]:
    """Make `binding` the run of this task and of the tasks it starts (the graph's nodes)."""
    token = _RUN.set(binding)
    try:
        yield
    finally:
        _RUN.reset(token)


@contextmanager
def in_flight(server: str, call_id: str) -> Generator[InFlightCall | None]:
    """Register the call for the duration of the block. Outside a bound run (tests, direct
    host use) nothing is registered and server requests find no author to ask."""
    run = _RUN.get()
    if run is None:
        yield None
        return
    call = InFlightCall(server=server, call_id=call_id, run=run, task_id=_TASK.get())
    run.calls.begin(call)
    token = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(token)
        run.calls.end(call)
