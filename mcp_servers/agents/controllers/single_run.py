"""`SingleRunController`: what every controller that drives one run at a time shares.

A run is a `RunState` driven in the controller's own task group; starting and resuming both go
to `_launch` (the subclass's), and the rest (streaming the run's events once, interrupting,
waiting for its result, closing) is the same whether the run is a CLI subprocess
(`runner.SubprocessController`) or a turn on an OpenClaw Gateway (`openclaw_gateway`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Self

import anyio
import anyio.abc

from mcp_servers.agents.controllers.base import AgentController
from mcp_servers.agents.controllers.run_state import RunState
from mcp_servers.agents.errors import ControllerError, NoRunError, UnknownPermissionRequestError
from mcp_servers.agents.events import AgentEvent
from mcp_servers.agents.requests import PermissionDecision, ResumeRequest, StartRequest
from mcp_servers.agents.results import OperatorResult


class SingleRunController(AgentController):
    """One run at a time, in the controller's task group (use with `async with`)."""

    def __init__(self) -> None:
        self._group: anyio.abc.TaskGroup | None = None
        self._run: RunState | None = None

    @abstractmethod
    async def _launch(self, request: StartRequest, resume_id: str | None) -> None:
        """Start a run (continuing native session `resume_id` when given) in `self._group`."""

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
        if self._run is not None:
            self._run.request_stop("interrupt")
        group, self._group = self._group, None
        try:
            if group is not None:
                await group.__aexit__(exc_type, exc, tb)
        finally:
            self._discard_unread_events()

    def _discard_unread_events(self) -> None:
        """Close the event channel of a run nobody streamed (events stay in the trace)."""
        if self._run is not None and not self._run.streamed:
            self._run.receive.close()

    async def start(self, request: StartRequest) -> None:
        await self._launch(request, None)

    async def resume(self, request: ResumeRequest) -> None:
        await self._launch(request, request.native_session_id)

    async def stream(self) -> AsyncIterator[AgentEvent]:
        run = self._require_run()
        if run.streamed:
            raise ControllerError("the run's event stream was already consumed")
        run.streamed = True
        async with run.receive:
            async for event in run.receive:
                yield event

    async def interrupt(self) -> None:
        self._require_run().request_stop("interrupt")

    async def answer_permission(self, request_id: str, decision: PermissionDecision) -> None:
        raise UnknownPermissionRequestError(request_id)

    async def wait(self) -> OperatorResult:
        run = self._require_run()
        await run.done.wait()
        assert run.result is not None
        return run.result

    @property
    def result(self) -> OperatorResult | None:
        return self._run.result if self._run is not None else None

    def _require_run(self) -> RunState:
        if self._run is None:
            raise NoRunError("no run has been started")
        return self._run
