"""The sidecar's composition root: database, MCP host, runtime, RPC handlers, wired.

The process itself (its streams and logs, the data folder and the database's checks, the reply
to `initialize` before this module is imported) starts in `sidecar.startup`, which imports this
module on a worker thread once it serves and builds `SidecarApp` on the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_servers.schedule import local_zone_name
from sidecar import heap
from sidecar import settings as settings_mod
from sidecar.builtin_servers import (
    agents_spec,
    memory_spec,
    sandbox_spec,
    schedule_spec,
    skills_spec,
    workspace_spec,
)
from sidecar.context.lazy import LazyMemory
from sidecar.handlers.servers import status_notification
from sidecar.handlers.services import Services
from sidecar.handlers.table import load_all
from sidecar.host.config import ConfigFile
from sidecar.host.features.client import HostFeatures
from sidecar.host.features.sampling import LMSampler
from sidecar.host.host import ServerStatus, ToolHost
from sidecar.llm.config import describe_how_to_configure
from sidecar.llm.planner import aclose_model_clients
from sidecar.llm.provider import PlannerProvider
from sidecar.model_key import ModelKey
from sidecar.plans.coordinator import Coordinator, Timings
from sidecar.plans.profiles import ProfilesFile
from sidecar.protocol import (
    NotifyParams,
    QueuedMessageInfo,
    QueueUpdateParams,
    RunEventParams,
)
from sidecar.rpc.framing import FrameWriter
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime.automation import Automation
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.backups import DailyBackups
from sidecar.runtime.clock import SystemClock
from sidecar.runtime.emitter import GatedEventSink
from sidecar.runtime.lanes import Lanes
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.ownership import DataFolderLock
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.team import TeamDesk
from sidecar.store import Database, Store
from sidecar.store.files import DatabaseFiles

if TYPE_CHECKING:
    from sidecar.graph.deps import GraphDeps
    from sidecar.plans.deps import PlanDeps
    from sidecar.turn.compiled import CompiledTurn

log = logging.getLogger("sidecar")


def coordinator_timings(env: Mapping[str, str]) -> Timings:
    """`ATRIUM_COORD_BACKOFF` (seconds, the first retry's delay) shortens the coordinator's
    delays, e.g. in tests."""
    raw = env.get("ATRIUM_COORD_BACKOFF")
    if not raw:
        return Timings()
    base = float(raw)
    return Timings(backoff_base=base, backoff_cap=base * 8, continuation_delay=base)


class SidecarApp:
    """The sidecar's parts, wired: database, settings, MCP host, planner, runs, RPC server."""

    def __init__(
        self,
        data: Path,
        db: Database,
        writer: FrameWriter,
        server: RpcServer,
        lock: DataFolderLock,
        *,
        version: str,
        freeze_heap: bool = False,
    ) -> None:
        """The parts on the open database `db`, their handlers (`routes`) for `server`, which
        already serves (`sidecar.startup`); `freeze_heap`: see `sidecar.heap`."""
        self.data = data
        self.lock = lock
        self.db = db
        self.store = Store(self.db)
        self.settings = settings_mod.SettingsFile(data / "settings.json")
        self.backups = DailyBackups(
            DatabaseFiles(self.db.path), lambda: self.settings.load().backup_days
        )
        workspace = settings_mod.resolve_workspace(self.settings.load(), os.environ, data)
        self.model_key = ModelKey(data)
        self.planner = PlannerProvider(self.settings, os.environ, self.model_key)
        self.memory = LazyMemory(self.store)
        self.features = HostFeatures(workspace, sampler=LMSampler(self.planner.config))
        self.host = ToolHost(
            [
                workspace_spec(workspace),
                sandbox_spec(data / "sandbox"),
                agents_spec(data, self.planner.config),
                skills_spec(workspace, data),
                memory_spec(self.memory),
                schedule_spec(lambda: self.scheduled.book),
            ],
            config_file=ConfigFile(data / "mcp.json"),
            features=self.features,
        )
        self.features.add_listener(self._on_server_notification)
        live = LiveInterrupts(self.store, self.features.calls)
        self.profiles = ProfilesFile(data / "profiles.json")
        self.coordinator = Coordinator(coordinator_timings(os.environ))
        self.automation = AutomationSettings(data / "automation.json")
        sink = GatedEventSink(self._notify_run_event, writer)
        self.runs = RunManager(
            self.store,
            sink,
            self._graph_factory,
            live=live,
            profiles=self.profiles.profiles,
            lanes=Lanes(self.automation.lane_caps),
        )
        self.runs.recover_after_crash()
        self.queue = QueueDesk(
            self.store, self.runs, self._notify_queue, self.automation.default_mode
        )
        self.team = TeamDesk(self.store, sink, live, self._plan_deps, self.queue.deliver)
        self._deps: GraphDeps | None = None
        self.scheduled = Automation(
            self.store,
            self.runs,
            self.queue,
            self.automation,
            self._workspace,
            self._notify_automation,
            SystemClock(float(os.environ.get("ATRIUM_CLOCK_OFFSET") or 0)),
            local_zone_name(),
        )
        self.services = Services(
            store=self.store,
            runs=self.runs,
            host=self.host,
            settings=self.settings,
            model_key=self.model_key,
            data_dir=data,
            version=version,
            model_configured=lambda: self.planner.config() is not None,
            warm_up=self.warm_up,
            workspace_changed=self._workspace_changed,
            features=self.features,
            profiles=self.profiles,
            coordinator=self.coordinator,
            queue=self.queue,
            automation=self.scheduled,
            automation_settings=self.automation,
            memory=self.memory.get,
            team=self.team,
        )
        self.routes = {
            name: Route(bound.params, bound.handler)
            for name, bound in load_all().bind(self.services).items()
        }
        self.server = server
        self.host.add_listener(self._notify_server_status)
        self._warm: asyncio.Task[None] | None = None
        self._freeze_heap = freeze_heap
        self._started: asyncio.Task[None] | None = None

    def _notify_server_status(self, status: ServerStatus) -> None:
        self.server.notify("server/status", status_notification(self.host, status))

    def _notify_automation(self, params: NotifyParams) -> None:
        self.server.notify("automation/notify", params)

    def _notify_queue(self, message: QueuedMessageInfo) -> None:
        self.server.notify("queue/update", QueueUpdateParams(message=message))

    def _notify_run_event(self, params: RunEventParams) -> None:
        self.server.notify("run/event", params)

    async def _graph_factory(self) -> CompiledTurn:
        from sidecar.graph.builder import compile_graph
        from sidecar.graph.deps import GraphDeps
        from sidecar.runtime.checkpoints import open_checkpointer

        saver = open_checkpointer(self.db)
        deps = GraphDeps(
            self.store,
            self.host,
            self.planner,
            describe_how_to_configure,
            profiles=self.profiles.profiles,
            coordinator=self.coordinator,
            workspace=self._workspace,
            data_dir=self.data,
            planner_for=self.planner.for_model,
            steering=self.queue.take_steering,
            embedder=self.planner.embedder,
            lane=self.runs.lanes.slot,
            background=self.team.start,
            pause_background=self.team.pause,
            memory=await self.memory.get(),
        )
        self._deps = deps
        compile_graph(deps, saver)
        return deps.compiled.get()

    async def _plan_deps(self) -> PlanDeps:
        """What background plans run with: the graph's own deps, built with the graph."""
        await self.runs.compiled()
        assert self._deps is not None
        return self._deps

    def _workspace(self) -> Path:
        return settings_mod.resolve_workspace(self.settings.load(), os.environ, self.data)

    def warm_up(self) -> None:
        """Pay for the heavy imports in the background once the desktop is talking to us, so
        the first turn does not."""
        if self._warm is None:
            self.host.start()
            self.backups.start()
            self._warm = asyncio.ensure_future(self._load())
            self._started = asyncio.ensure_future(self._start_automation())

    async def _start_automation(self) -> None:
        """Plans a crash left running are taken up; messages it left queued get their turns."""
        self.team.resume_all()
        await self.queue.drain_all()
        self.scheduled.start()

    async def _load(self) -> None:
        with heap.warming(self._freeze_heap):
            # LangGraph and friends take a second or more to import: do it off the event loop
            # so the `initialize` reply and the requests after it are not held up.
            for name in ("sidecar.graph.builder", "sidecar.runtime.checkpoints"):
                await asyncio.to_thread(importlib.import_module, name)
            await self.runs.compiled()
            # The first keyring read can block (a D-Bus backend, a locked keychain): take it (and
            # the key file's) off the event loop here, so a turn reads the key from memory.
            await self.model_key.load()
            model = self.planner()
            if model is not None:
                await model.warm_up()

    async def _workspace_changed(self, root: Path) -> None:
        await self.host.replace(workspace_spec(root))
        await self.host.replace(skills_spec(root, self.data))
        await self.features.set_workspace(root)

    async def _on_server_notification(self, server: str, method: str) -> None:
        if method == "notifications/tools/list_changed":
            await self.host.refresh_tools(server)

    async def run(self, serving: Awaitable[None]) -> None:
        """Serve (`serving`: the server's `serve`, running) until EOF on stdin or a `shutdown`
        request, then close everything."""
        stopper = asyncio.ensure_future(self._close_on_shutdown())
        try:
            await serving
        finally:
            stopper.cancel()
            await self.close()

    async def _close_on_shutdown(self) -> None:
        await self.services.shutdown_requested.wait()
        self.server.closing.set()

    async def close(self) -> None:
        """Stop everything, then close the database and release the data folder whatever
        failed before. The warm-up stops first, so it begins nothing more; an import it has
        running in a worker thread cannot be stopped, and nothing here waits for it."""
        log.info("stopping runs")
        for task in (self._warm, self._started):
            if task is not None:
                task.cancel()
        try:
            await self.queue.aclose()
            await self.team.aclose()
            await self.scheduled.aclose()
            await self.runs.shutdown()
            await self.backups.aclose()
            log.info("stopping MCP servers")
            await self.host.aclose()
            await aclose_model_clients()
        finally:
            self.db.close()
            self.lock.release()
        log.info("sidecar stopped")
