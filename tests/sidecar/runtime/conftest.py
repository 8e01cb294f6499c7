"""An in-process runtime: real store file, real graph and checkpoints, the workspace MCP server
in memory, and a scripted planner."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sidecar.host.host import ServerSpec, ToolHost
from sidecar.protocol import TERMINAL_EVENT_TYPES, RunEventParams
from sidecar.runtime.runs import RunManager
from sidecar.store import Database, Store, open_database
from tests.sidecar.runtime.scripted import ScriptedPlanner
from tests.sidecar.runtime.wiring import wire_runtime


@dataclass
class Rig:
    db: Database
    store: Store
    runs: RunManager
    planner: ScriptedPlanner
    workspace: Path
    hold: HoldGate
    events: list[RunEventParams] = field(default_factory=list[RunEventParams])
    ended: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )

    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def sink(self, params: RunEventParams) -> None:
        self.events.append(params)
        self.arrived.set()
        if params.event.type in TERMINAL_EVENT_TYPES:
            self.ended[params.run_id].set()

    async def streamed(self, run_id: str, ending: str) -> str:
        """Wait until the run's streamed text ends with `ending`; the text."""
        async with asyncio.timeout(30):
            while True:
                text = "".join(
                    e.event.text  # type: ignore[union-attr]
                    for e in self.events
                    if e.run_id == run_id and e.event.type == "token"
                )
                if text.rstrip().endswith(ending):
                    return text
                self.arrived.clear()
                await self.arrived.wait()

    async def finish(self, run_id: str) -> list[RunEventParams]:
        async with asyncio.timeout(30):
            await self.ended[run_id].wait()
        return [e for e in self.events if e.run_id == run_id]

    def types(self, run_id: str) -> list[str]:
        return [e.event.type for e in self.events if e.run_id == run_id]

    def checkpoint_rows(self, thread_id: str) -> int:
        row = self.db.conn.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return int(row[0])


@dataclass
class HoldGate:
    """Lets a test hold the `slow__hold` tool mid-call."""

    calls: int = 0
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


def build_slow_server(gate: HoldGate) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    server = MCPServer(name="slow")

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    async def hold(label: str) -> str:
        """Counts the call, then waits until the test releases it."""
        gate.calls += 1
        gate.entered.set()
        await gate.release.wait()
        return f"held {label}"

    return server


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    from mcp_servers.workspace import build_server

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("the river is wide\n")
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    gate = HoldGate()
    host = ToolHost(
        [
            ServerSpec("workspace", lambda: build_server(workspace)),
            ServerSpec("slow", lambda: build_slow_server(gate)),
        ]
    )
    host.start()
    await host.wait_ready()
    planner = ScriptedPlanner([])
    sinks: list[Rig] = []
    wired = wire_runtime(
        store,
        host,
        lambda: planner,
        lambda p: sinks[0].sink(p),  # noqa: PLW0108 - late bound
        tmp_path,
        workspace=workspace,
    )
    rig = Rig(db, store, wired.runs, planner, workspace, gate)
    sinks.append(rig)
    yield rig
    await wired.aclose()
    await host.aclose()
    db.close()
