"""The real runtime (store file, graph, checkpoints, `RunManager` with live interrupts) driving
server-everything over stdio through a `ToolHost` with `HostFeatures`, and a scripted planner."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from sidecar.host.features.client import HostFeatures
from sidecar.host.features.sampling import Sampler
from sidecar.host.host import ServerSpec, ToolHost
from sidecar.protocol import TERMINAL_EVENT_TYPES, InterruptEvent, InterruptInfo, RunEventParams
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.runs import RunManager
from sidecar.store import Database, Store, open_database
from tests.setup.mcp_everything import Everything
from tests.sidecar.host.features.conftest import SERVER, stdio_params
from tests.sidecar.runtime.scripted import ScriptedPlanner
from tests.sidecar.runtime.wiring import wire_runtime


@dataclass
class LiveRig:
    db: Database
    store: Store
    runs: RunManager
    live: LiveInterrupts
    features: HostFeatures
    planner: ScriptedPlanner
    events: list[RunEventParams] = field(default_factory=list[RunEventParams])
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: defaultdict[str, asyncio.Event] = field(
        default_factory=lambda: defaultdict(asyncio.Event)
    )

    def sink(self, params: RunEventParams) -> None:
        self.events.append(params)
        self.changed.set()
        if params.event.type in TERMINAL_EVENT_TYPES:
            self.ended[params.run_id].set()

    async def finish(self, run_id: str) -> list[RunEventParams]:
        with anyio.fail_after(30):
            await self.ended[run_id].wait()
        return [e for e in self.events if e.run_id == run_id]

    async def interrupt(self, run_id: str, count: int = 1) -> InterruptInfo:
        """Wait for the run's `count`-th interrupt event."""
        with anyio.fail_after(30):
            while True:
                found = [
                    e.event.interrupt
                    for e in self.events
                    if e.run_id == run_id and isinstance(e.event, InterruptEvent)
                ]
                if len(found) >= count:
                    return found[count - 1]
                self.changed.clear()
                await self.changed.wait()

    def types(self, run_id: str) -> list[str]:
        return [e.event.type for e in self.events if e.run_id == run_id]


async def live_rig(
    tmp_path: Path, everything: Everything, sampler: Sampler | None = None
) -> AsyncIterator[LiveRig]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    features = HostFeatures(workspace, sampler=sampler)
    spec = ServerSpec(SERVER, lambda: stdio_params(everything), transport="stdio")
    host = ToolHost([spec], features=features)
    await host.wait_ready()
    planner = ScriptedPlanner([])
    live = LiveInterrupts(store, features.calls)
    sinks: list[LiveRig] = []
    wired = wire_runtime(
        store,
        host,
        lambda: planner,
        lambda p: sinks[0].sink(p),  # noqa: PLW0108 - late bound
        tmp_path,
        workspace=workspace,
        live=live,
    )
    rig = LiveRig(db, store, wired.runs, live, features, planner)
    sinks.append(rig)
    yield rig
    await wired.aclose()
    await host.aclose()
    db.close()
    from sidecar.llm.planner import aclose_model_clients

    await aclose_model_clients()
