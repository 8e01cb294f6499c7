"""The real `@modelcontextprotocol/server-everything` behind a `ToolHost` with `HostFeatures`,
over stdio and over streamable HTTP on 127.0.0.1, and a scripted author answering its requests.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from sidecar.binding.calls import (
    AnswerCheck,
    InFlightCall,
    RunBinding,
    bind_run,
    in_flight,
)
from sidecar.host.features.client import HostFeatures
from sidecar.host.features.logs import ServerLogRecord
from sidecar.host.features.sampling import LMSampler
from sidecar.host.host import ServerSpec, ToolHost
from sidecar.host.types import ToolOutcome
from sidecar.llm.types import LMConfig
from tests.fakes.model_server import ScriptedModelServer
from tests.peers import peer_unavailable
from tests.setup.mcp_everything import (
    Everything,
    EverythingUnavailable,
    http_server,
    install_everything,
)

SERVER = "everything"


@pytest.fixture(scope="session")
def everything() -> Everything:
    """The pinned server, installed on first use; skips where npm/node is missing."""
    try:
        return install_everything()
    except EverythingUnavailable as exc:
        peer_unavailable(f"server-everything: {exc}")


def stdio_params(everything: Everything, command: list[str] | None = None) -> Any:
    from mcp import StdioServerParameters

    argv = command or everything.stdio_command()
    return StdioServerParameters(command=argv[0], args=argv[1:], env=everything.env())


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, everything: Everything) -> Iterator[ServerSpec]:
    """A spec for server-everything over each transport."""
    if request.param == "stdio":
        yield ServerSpec(SERVER, lambda: stdio_params(everything), transport="stdio")
        return
    from sidecar.host.launch import HttpTarget

    with http_server(everything) as url:
        yield ServerSpec(SERVER, lambda: HttpTarget(url, {}), transport="http")


@dataclass
class ScriptedAuthor:
    """Stands in for the author: answers live interrupts from a queue, checking each answer the
    way `run/resume` does, and records what it was asked."""

    answers: deque[dict[str, Any]] = field(default_factory=deque[dict[str, Any]])
    asked: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    rejected: list[str] = field(default_factory=list[str])

    async def __call__(
        self, call: InFlightCall, payload: dict[str, Any], check: AnswerCheck | None
    ) -> dict[str, Any]:
        self.asked.append({**payload, "call_id": call.call_id})
        answer = self.answers.popleft()
        problem = check(answer) if check is not None else None
        if problem is not None:
            self.rejected.append(problem)
            raise AssertionError(f"the scripted answer does not fit: {problem}")
        return answer


@dataclass
class FeatureRig:
    host: ToolHost
    features: HostFeatures
    author: ScriptedAuthor
    workspace: Path
    progress: list[tuple[float, float | None, str | None]] = field(
        default_factory=list[tuple[float, float | None, str | None]]
    )

    async def call(self, tool: str, arguments: dict[str, Any], call_id: str = "c1") -> ToolOutcome:
        """Call a tool the way the tool node does: inside a bound run, registered in flight."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append((progress, total, message))

        binding = RunBinding("thread-1", "run-1", self.features.calls, self.author)
        with bind_run(binding), in_flight(SERVER, call_id):
            return await self.host.call(f"{SERVER}__{tool}", arguments, on_progress)


def connection_client(host: ToolHost, server: str) -> Any:
    """The live client of a host's server (test-only reach into the host)."""
    conn = host._connections[server]  # pyright: ignore[reportPrivateUsage]
    return conn.client


async def ensure_connected(host: ToolHost, features: HostFeatures, server: str = SERVER) -> None:
    """The host reports each session to `features.connected(...)`; until that hook is wired
    into the supervisor, report it here so the feature methods find the client."""
    if server not in features.connected_servers():
        client = connection_client(host, server)
        assert client is not None, f"{server} is not connected: {host.states()}"
        await features.connected(server, client)


def build_sampler(model_server: ScriptedModelServer) -> LMSampler:
    config = LMConfig(model="openai/scripted", api_base=model_server.url + "/v1", api_key="sk-x")
    return LMSampler(lambda: config)


@pytest.fixture
async def rig(
    tmp_path: Path, target: ServerSpec, scripted_chat: ScriptedModelServer
) -> AsyncIterator[FeatureRig]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    features = HostFeatures(workspace, sampler=build_sampler(scripted_chat))
    host = ToolHost([target], features=features)
    host.start()
    await host.wait_ready()
    await ensure_connected(host, features)
    yield FeatureRig(host, features, ScriptedAuthor(), workspace)
    await host.aclose()
    from sidecar.llm.planner import aclose_model_clients

    await aclose_model_clients()


class LogWatch:
    """Collects a server's new log entries; `wait_for` waits (bounded) for a matching one."""

    def __init__(self, features: HostFeatures, server: str = SERVER) -> None:
        self.server = server
        self.entries: list[ServerLogRecord] = []
        self._changed = asyncio.Event()
        self._stop = features.logs.subscribe(self._on_entry)

    def _on_entry(self, server: str, entry: ServerLogRecord) -> None:
        if server == self.server:
            self.entries.append(entry)
            self._changed.set()

    async def wait_for(
        self, predicate: Callable[[ServerLogRecord], bool], timeout_s: float = 20.0
    ) -> ServerLogRecord:
        with anyio.fail_after(timeout_s):
            while True:
                for entry in self.entries:
                    if predicate(entry):
                        return entry
                self._changed.clear()
                await self._changed.wait()

    def close(self) -> None:
        self._stop()
