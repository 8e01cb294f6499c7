"""The sidecar's composition root: logging, database, MCP host, runtime, RPC over stdio.

Start-up takes the data folder's lock, then checks the database file before anything opens it
for writing (`sidecar.store.health`); a damaged or emptied file, or a disk with no room to
start, is refused with `EXIT_REFUSED` and a `StorageRefusal` line (`sidecar.protocol.storage`).
The repair flags the window passes after such a refusal (`--start-fresh`, `--restore-backup`)
are carried out under the lock, before that check.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    MAX_LISTED_BACKUPS,
    REFUSED_PREFIX,
    RESTORE_BACKUP_FLAG,
    START_FRESH_FLAG,
    BackupInfo,
    NotifyParams,
    QueuedMessageInfo,
    QueueUpdateParams,
    RunEventParams,
    StorageRefusal,
    disk_full_message,
    storage_line,
)
from sidecar.rpc.framing import FrameWriter, read_frames
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime import ownership
from sidecar.runtime.automation import Automation
from sidecar.runtime.automation_settings import AutomationSettings
from sidecar.runtime.backups import DailyBackups
from sidecar.runtime.clock import SystemClock
from sidecar.runtime.emitter import GatedEventSink
from sidecar.runtime.lanes import Lanes
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.ownership import DataFolderInUseError, DataFolderLock
from sidecar.runtime.queueing import QueueDesk
from sidecar.runtime.runs import RunManager
from sidecar.runtime.team import TeamDesk
from sidecar.store import Store, open_database
from sidecar.store.backups import BackupFailedError, check_backup
from sidecar.store.db import NewerSchemaError
from sidecar.store.disk import full_disk_folder
from sidecar.store.files import DATABASE_NAME, DatabaseFiles
from sidecar.store.health import DatabaseDamagedError, check_database, mark_used

if TYPE_CHECKING:
    from sidecar.graph.deps import GraphDeps
    from sidecar.plans.deps import PlanDeps
    from sidecar.turn.compiled import CompiledTurn

log = logging.getLogger("sidecar")


class LogFileHandler(logging.handlers.RotatingFileHandler):
    """The log file, which a full disk may refuse: then it says so once on stderr (where every
    line goes as well) instead of a traceback per line."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)
            return
        if not self.failed:
            self.failed = True
            sys.stderr.write(
                f"atrium: the log file {self.baseFilename} cannot be written: {error}\n"
            )


def configure_logging(data: Path) -> None:
    """Logs go to stderr and a rotating file in the data dir, never to stdout (the file only
    when it can be made: a full disk does not stop the start-up from saying why it stops)."""
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    try:
        logs = data / "logs"
        logs.mkdir(exist_ok=True)
        handlers.append(
            LogFileHandler(
                logs / "sidecar.log", maxBytes=2_000_000, backupCount=3, encoding="utf-8"
            )
        )
    except OSError as exc:
        sys.stderr.write(f"atrium: no log file in {data}: {exc}\n")
    root = logging.getLogger()
    root.handlers[:] = []
    for handler in handlers:
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

    def __init__(
        self,
        data: Path,
        writer: FrameWriter,
        lock: DataFolderLock,
        *,
        freeze_heap: bool = False,
    ) -> None:
        self.data = data
        self.lock = lock
        self.db = open_database(data / DATABASE_NAME)
        self.store = Store(self.db)
        self.settings = settings_mod.SettingsFile(data / "settings.json")
        self.backups = DailyBackups(
            DatabaseFiles(self.db.path), lambda: self.settings.load().backup_days
        )
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


@dataclass(frozen=True, slots=True)
class Repair:
    """What the window asked to be done to the database before start-up checks it."""

    start_fresh: bool = False
    restore: Path | None = None


def parse_repair(argv: Sequence[str]) -> Repair:
    """The sidecar's command line: the repair flags of `sidecar.protocol.storage`."""
    parser = argparse.ArgumentParser(prog="atrium-sidecar")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        START_FRESH_FLAG, action="store_true", help="move the database aside and start a new one"
    )
    group.add_argument(
        RESTORE_BACKUP_FLAG, type=Path, metavar="BACKUP", help="put this backup in its place"
    )
    args = parser.parse_args(list(argv))
    return Repair(start_fresh=args.start_fresh, restore=args.restore_backup)


def prepare_database(path: Path, repair: Repair) -> None:
    """Carry out `repair`, then check the database file (blocking: run it off the loop; the
    caller holds the data folder's lock).

    Raises:
        DatabaseDamagedError: the file is damaged or emptied (and was not changed).
        DiskFullError, OSError: no room (or a failed rename) while repairing or checking.
    """
    files = DatabaseFiles(path)
    failed_restore: str | None = None
    if repair.start_fresh:
        files.set_aside()
    elif repair.restore is not None:
        try:
            check_backup(repair.restore)
        except BackupFailedError as exc:
            log.error("not restoring: %s", exc)
            failed_restore = str(exc)
        else:
            files.set_aside()
            files.put_in_place(repair.restore)
    try:
        check_database(path)
    except DatabaseDamagedError as exc:
        if failed_restore is not None:
            raise DatabaseDamagedError(
                exc.path, exc.problem, f"{exc.detail} (and {failed_restore})"
            ) from exc
        raise


async def open_app(
    data: Path, writer: FrameWriter, *, repair: Repair | None = None, freeze_heap: bool = False
) -> SidecarApp:
    """Take the data folder, repair and check its database off the event loop, and build the
    app on it (`freeze_heap`: see `sidecar.heap`; the process entry point turns it on).

    Raises:
        DataFolderInUseError, NewerSchemaError, DatabaseDamagedError, and on a full disk
        `DiskFullError`, `OSError` or `sqlite3.Error` (see `sidecar.store.disk`).
    """
    lock = ownership.acquire(data)
    try:
        await asyncio.to_thread(prepare_database, data / DATABASE_NAME, repair or Repair())
        app = SidecarApp(data, writer, lock, freeze_heap=freeze_heap)
    except BaseException:
        lock.release()
        raise
    await asyncio.to_thread(mark_used, data)
    return app


async def serve(
    stdin: asyncio.StreamReader,
    stdout: asyncio.StreamWriter,
    data: Path,
    *,
    repair: Repair | None = None,
    freeze_heap: bool = False,
) -> None:
    """Run the sidecar on these streams until EOF or a `shutdown` request; a start that cannot
    serve this data folder is refused (`refuse`: exit `EXIT_REFUSED`, no traceback)."""
    try:
        app = await open_app(data, FrameWriter(stdout), repair=repair, freeze_heap=freeze_heap)
    except REFUSALS as exc:
        refuse(str(exc))
    except DatabaseDamagedError as exc:
        refuse_storage(damaged_refusal(exc))
    except Exception as exc:  # the process boundary: only a start that found no room is ours
        folder = full_disk_folder(exc, data)
        if folder is None:
            raise
        refuse_storage(
            StorageRefusal(
                problem="disk_full",
                database=str(data / DATABASE_NAME),
                detail=disk_full_message(str(folder)),
            )
        )
    await app.run(stdin)


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


async def amain(repair: Repair | None = None) -> None:
    # LiteLLM would otherwise fetch its model map from the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    protocol_fd = protect_stdout()
    data = settings_mod.data_dir()
    configure_logging(data)
    log.info("sidecar %s starting; data dir %s", version(), data)
    install_task_dump()
    reader, writer = await _stdio(protocol_fd)
    await serve(reader, writer, data, repair=repair, freeze_heap=True)


REFUSALS: tuple[type[Exception], ...] = (NewerSchemaError, DataFolderInUseError)
"""What makes the sidecar refuse to start rather than crash: the author must change something.
(A damaged database and a full disk are refused too, with a `StorageRefusal`.)"""


def damaged_refusal(exc: DatabaseDamagedError) -> StorageRefusal:
    backups = DatabaseFiles(exc.path).backups()
    return StorageRefusal(
        problem="emptied" if exc.problem == "emptied" else "damaged",
        database=str(exc.path),
        detail=exc.detail,
        backups=[
            BackupInfo(path=str(b.path), taken_at=b.taken_at, size=b.size)
            for b in backups[:MAX_LISTED_BACKUPS]
        ],
    )


def refuse_storage(refusal: StorageRefusal) -> NoReturn:
    """Refuse with the storage line the window reads before the refused line."""
    if refusal.problem == "disk_full":
        refuse(refusal.detail, before=storage_line(refusal))
    where = Path(refusal.database)
    folder = DatabaseFiles(where).backup_dir
    if refusal.backups:
        todo = (
            f"Restore a backup (from {folder}) or start fresh after moving it aside; Atrium's "
            "window offers both"
        )
    else:
        todo = (
            f"There is no backup of it in {folder}: start fresh after moving it aside (Atrium's "
            "window offers this), or put a copy of your own in its place"
        )
    reason = f"the database {where} is {refusal.problem}: {refusal.detail}. {todo}"
    refuse(reason, before=storage_line(refusal))


def refuse(reason: str, *, before: str = "") -> NoReturn:
    """Say why on stderr in the line the desktop looks for (with `before`, a line written just
    ahead of it in the same write), and exit with `EXIT_REFUSED`."""
    log.error("refusing to start: %s", reason)
    sys.stderr.write(f"{before}{REFUSED_PREFIX}{reason}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_REFUSED)
