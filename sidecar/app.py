"""The sidecar's composition root: logging, database, MCP host, runtime, RPC over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

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
from sidecar.keychain import KEYCHAIN, MODEL_KEY_USER, MODEL_SERVICE
from sidecar.llm.config import describe_how_to_configure
from sidecar.llm.planner import aclose_model_clients
from sidecar.llm.provider import PlannerProvider
from sidecar.plans.coordinator import Coordinator, Timings
from sidecar.plans.profiles import ProfilesFile
from sidecar.protocol import (
    EXIT_REFUSED,
    REFUSED_PREFIX,
    NotifyParams,
    QueuedMessageInfo,
    QueueUpdateParams,
    RunEventParams,
)
from sidecar.rpc.framing import FrameWriter, read_frames
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime import ownership
from sidecar.runtime.automation import Automation
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.clock import SystemClock
from sidecar.runtime.emitter import GatedEventSink
from sidecar.runtime.lanes import Lanes
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.ownership import DataFolderInUseError
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.team import TeamDesk
from sidecar.store import Store, open_database
from sidecar.store.db import NewerSchemaError

if TYPE_CHECKING:
    from sidecar.graph.deps import GraphDeps
    from sidecar.plans.deps import PlanDeps
    from sidecar.turn.compiled import CompiledTurn

log = logging.getLogger("sidecar")


def configure_logging(data: Path) -> None:
    """Logs go to stderr and a rotating file in the data dir, never to stdout."""
    logs = data / "logs"
    logs.mkdir(exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    file_handler = logging.handlers.RotatingFileHandler(
        logs / "sidecar.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
    )
    stderr_handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.handlers[:] = []
    for handler in (file_handler, stderr_handler):
        handler.setFormatter(fmt)
        root.addHandler(handler)
    root.setLevel(os.environ.get("ATRIUM_LOG_LEVEL", "INFO").upper())
    # LiteLLM logs every request at INFO; only its warnings are worth a line.
    logging.getLogger("LiteLLM").setLevel(logging.WARNING)


def protect_stdout() -> int:
    """Keep fd 1 for protocol frames only: stray prints from libraries go to stderr."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def version() -> str:
    try:
        return metadata.version("atrium")
    except metadata.PackageNotFoundError:
        return "0+unknown"


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

    def __init__(self, data: Path, writer: FrameWriter, *, freeze_heap: bool = False) -> None:
        self.data = data
        self.lock = ownership.acquire(data)
        self.db = open_database(data / "atrium.db")
        self.store = Store(self.db)
        self.settings = settings_mod.SettingsFile(data / "settings.json")
        workspace = settings_mod.resolve_workspace(self.settings.load(), os.environ, data)
        self.planner = PlannerProvider(self.settings, os.environ)
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
            data_dir=data,
            version=version(),
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
        routes = {
            name: Route(bound.params, bound.handler)
            for name, bound in load_all().bind(self.services).items()
        }
        self.server = RpcServer(routes, writer, gated=True)
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
            # The first keyring read can block (a D-Bus backend, a locked keychain): take it off
            # the event loop here, so a turn reads the key from memory.
            await KEYCHAIN.aget(MODEL_SERVICE, MODEL_KEY_USER)
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

    async def run(self, stdin: asyncio.StreamReader) -> None:
        """Serve until EOF on stdin or a `shutdown` request, then close everything."""
        stopper = asyncio.ensure_future(self._close_on_shutdown())
        try:
            await self.server.serve(read_frames(stdin))
        finally:
            stopper.cancel()
            await self.close()

    async def _close_on_shutdown(self) -> None:
        await self.services.shutdown_requested.wait()
        self.server.closing.set()

    async def close(self) -> None:
        log.info("stopping runs")
        if self._started is not None:
            self._started.cancel()
        await self.queue.aclose()
        await self.team.aclose()
        await self.scheduled.aclose()
        await self.runs.shutdown()
        log.info("stopping MCP servers")
        await self.host.aclose()
        if self._warm is not None:
            self._warm.cancel()
        await aclose_model_clients()
        self.db.close()
        self.lock.release()
        log.info("sidecar stopped")


async def serve(
    stdin: asyncio.StreamReader,
    stdout: asyncio.StreamWriter,
    data: Path,
    *,
    freeze_heap: bool = False,
) -> None:
    """Run the sidecar on these streams until EOF or a `shutdown` request (`freeze_heap`: see
    `sidecar.heap`; the process entry point turns it on)."""
    await SidecarApp(data, FrameWriter(stdout), freeze_heap=freeze_heap).run(stdin)


async def _stdio(protocol_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def install_task_dump() -> None:
    """`kill -USR2 <sidecar pid>` writes every asyncio task's stack (and every thread's) to
    the log: what a stuck run is waiting on, without stopping it."""
    import faulthandler
    import io
    import signal

    def dump() -> None:
        out = io.StringIO()
        for task in asyncio.all_tasks():
            out.write(f"--- {task.get_name()}\n")
            awaited: Any = task.get_coro()
            while awaited is not None:
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
                if frame is not None:
                    out.write(
                        f"  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}\n"
                    )
                awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
        log.warning("asyncio tasks:\n%s", out.getvalue())
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)

    if signal.getsignal(signal.SIGUSR2) is not signal.SIG_DFL:
        return  # someone (a profiling harness) already uses it
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, dump)


async def amain() -> None:
    # LiteLLM would otherwise fetch its model map from the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    protocol_fd = protect_stdout()
    data = settings_mod.data_dir()
    configure_logging(data)
    log.info("sidecar %s starting; data dir %s", version(), data)
    install_task_dump()
    reader, writer = await _stdio(protocol_fd)
    try:
        await serve(reader, writer, data, freeze_heap=True)
    except REFUSALS as exc:
        refuse(str(exc))


REFUSALS: tuple[type[Exception], ...] = (NewerSchemaError, DataFolderInUseError)
"""What makes the sidecar refuse to start rather than crash: the author must change something."""


def refuse(reason: str) -> NoReturn:
    """Say why on stderr in the line the desktop looks for, and exit with `EXIT_REFUSED`."""
    log.error("refusing to start: %s", reason)
    sys.stderr.write(f"{REFUSED_PREFIX}{reason}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_REFUSED)
