"""A run's event queue is bounded: a flood of events with nobody following waits in the CLI's
pipe, not in memory; a follower then gets every event in order; a stopped run still ends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
import anyio.lowlevel
import pytest

from mcp_servers.agents.controllers.base import AgentController
from mcp_servers.agents.events import AgentEvent, MessageDelta
from mcp_servers.agents.requests import PermissionDecision, ResumeRequest, StartRequest
from mcp_servers.agents.results import OperatorResult, Provider
from mcp_servers.agents.runs import EVENT_BUFFER, RunRegistry

pytestmark = pytest.mark.anyio
FLOOD = 10_000


class FloodingController(AgentController):
    """Streams `FLOOD` deltas as fast as they are taken, counting how many it produced."""

    provider = "codex"

    def __init__(self) -> None:
        self.produced = 0
        self.stopped = anyio.Event()
        self._request: StartRequest | None = None
        self._result: OperatorResult | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def start(self, request: StartRequest) -> None:
        self._request = request

    async def resume(self, request: ResumeRequest) -> None:
        raise NotImplementedError

    async def _events(self) -> AsyncIterator[AgentEvent]:
        for i in range(FLOOD):
            if self.stopped.is_set():
                return
            self.produced += 1
            yield MessageDelta(text=f"{i} ")

    def stream(self) -> AsyncIterator[AgentEvent]:
        return self._events()

    async def interrupt(self) -> None:
        self.stopped.set()

    async def answer_permission(self, request_id: str, decision: PermissionDecision) -> None:
        raise NotImplementedError

    async def wait(self) -> OperatorResult:
        assert self._request is not None
        status = "interrupted" if self.stopped.is_set() else "success"
        self._result = OperatorResult(run_id=self._request.run_id, provider="codex", status=status)
        return self._result

    @property
    def result(self) -> OperatorResult | None:
        return self._result


def _request(tmp_path: Path) -> StartRequest:
    return StartRequest(run_id="r-1", session_id="s-1", working_dir=tmp_path, instruction="go")


async def test_an_unfollowed_flood_stops_at_the_buffer_and_a_follower_gets_every_event(
    tmp_path: Path,
) -> None:
    controller = FloodingController()

    def factory(provider: Provider, executable: str) -> AgentController:
        del provider, executable
        return controller

    async with RunRegistry(factory, lambda _p: "codex") as registry:
        run = await registry.launch("codex", _request(tmp_path))
        with anyio.fail_after(10):
            while controller.produced < EVENT_BUFFER:
                await anyio.lowlevel.checkpoint()
        for _ in range(100):
            await anyio.lowlevel.checkpoint()
        assert controller.produced <= EVENT_BUFFER + 1

        texts: list[str] = []
        async with run.follow():
            with anyio.fail_after(30):
                async for _seq, event in run.receive:
                    assert isinstance(event, MessageDelta)
                    texts.append(event.text)
        assert texts == [f"{i} " for i in range(FLOOD)]
        assert run.result is not None and run.result.status == "success"


async def test_stopping_a_blocked_unfollowed_run_ends_it(tmp_path: Path) -> None:
    controller = FloodingController()
    async with RunRegistry(lambda _p, _e: controller, lambda _p: "codex") as registry:
        run = await registry.launch("codex", _request(tmp_path))
        with anyio.fail_after(10):
            while controller.produced < EVENT_BUFFER:
                await anyio.lowlevel.checkpoint()

        with anyio.fail_after(10):
            await run.stop(10)

        assert run.done.is_set()
        assert run.result is not None and run.result.status == "interrupted"
