"""The sidecar process's start: its streams and logs, the data folder and its database, and the
reply to `initialize` before most of the sidecar is imported.

The window shows nothing until `initialize` is answered, and importing what a first turn needs
(the MCP SDK and its type tables, LangGraph, DSPy and LiteLLM, and most of the sidecar's own
modules) took 850 ms of an 865 ms start (`python -m bench cold_start`). So this module imports
only the wire protocol, the RPC server and what the data folder's checks need. It takes the
folder, checks and opens the database first, as before (a refusal still comes before any
reply), then serves JSON-RPC at once: `initialize` and `ping` are answered here; every other
request waits for the app (`StagedRoutes`), which a worker thread imports meanwhile
(`sidecar.app`) and the event loop then builds. From then on its handlers answer everything,
and its warm-up (the MCP servers, the graph, the model stack: `SidecarApp.warm_up`) starts as
soon as `initialize` has been answered. tests/sidecar/test_app_imports.py holds the line on
what is imported before the reply.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from sidecar import settings as settings_mod
from sidecar.llm.provider import PlannerProvider
from sidecar.model_key import ModelKey
from sidecar.protocol import (
    EXIT_REFUSED,
    INITIALIZE,
    MAX_LISTED_BACKUPS,
    METHODS,
    PING,
    REFUSED_PREFIX,
    RESTORE_BACKUP_FLAG,
    START_FRESH_FLAG,
    BackupInfo,
    Empty,
    InitializeParams,
    InitializeResult,
    StorageRefusal,
    WireModel,
    disk_full_message,
    handshake,
    storage_line,
)
from sidecar.rpc.framing import FrameWriter, read_frames
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime import ownership
from sidecar.runtime.ownership import DataFolderInUseError, DataFolderLock

if TYPE_CHECKING:
    from sidecar.app import SidecarApp
    from sidecar.store.health import DatabaseDamagedError

# The database's own modules (its checks, its schema and every repository) load on the worker
# thread with the app, after the reply: the functions below that need them import them there.
DATABASE_NAME = "atrium.db"
"""The database file in the data folder (`sidecar.store.files.DATABASE_NAME`)."""

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


@functools.cache
def version() -> str:
    """Atrium's version (read once: the package metadata lookup scans the installed ones)."""
    try:
        return metadata.version("atrium")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@dataclass(frozen=True, slots=True)
class Repair:
    """What the window asked to be done to the database before start-up checks it."""

    start_fresh: bool = False
    restore: Path | None = None

    @property
    def asked(self) -> bool:
        return self.start_fresh or self.restore is not None


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
    from sidecar.store.backups import BackupFailedError, check_backup
    from sidecar.store.files import DatabaseFiles
    from sidecar.store.health import DatabaseDamagedError, check_database

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


class StagedRoutes(Mapping[str, Route]):
    """Every declared method's route while the app loads: the start-up's own (`initialize`,
    `ping`) answer at once; any other waits for the app (`open`) and then goes to its handler,
    as do all of them from then on."""

    def __init__(self, early: Mapping[str, Route]) -> None:
        self._early = dict(early)
        self._app: Mapping[str, Route] | None = None
        self._opened = asyncio.Event()
        self._waiting = {
            name: Route(spec.params, self._after_open(name)) for name, spec in METHODS.items()
        }

    def open(self, routes: Mapping[str, Route]) -> None:
        """Hand every method, and the requests waiting, to the app's handlers."""
        self._app = routes
        self._opened.set()

    def _after_open(self, name: str) -> Callable[[Any], Awaitable[WireModel]]:
        async def handler(params: Any) -> WireModel:
            await self._opened.wait()
            assert self._app is not None
            return await self._app[name].handler(params)

        return handler

    def __getitem__(self, name: str) -> Route:
        if self._app is not None:
            return self._app[name]
        return self._early.get(name) or self._waiting[name]

    def __iter__(self) -> Iterator[str]:
        return iter(METHODS)

    def __len__(self) -> int:
        return len(METHODS)


@dataclass
class FrontDoor:
    """What answers before the app is there: the handshake (with whether a model is configured,
    read as the app reads it) and `ping`."""

    data: Path
    version: str
    model_configured: Callable[[], bool]
    initialized: asyncio.Event

    def routes(self) -> dict[str, Route]:
        async def initialize(params: InitializeParams) -> InitializeResult:
            result = handshake(
                params,
                server_version=self.version,
                data_dir=str(self.data),
                model_configured=self.model_configured(),
            )
            self.initialized.set()
            return result

        async def ping(params: Empty) -> Empty:
            return params

        return {INITIALIZE: Route(InitializeParams, initialize), PING: Route(Empty, ping)}


def front_door(data: Path, version: str) -> FrontDoor:
    """The front door of a sidecar on `data` (the configured model as the app resolves it)."""
    planner = PlannerProvider(
        settings_mod.SettingsFile(data / "settings.json"), os.environ, ModelKey(data)
    )
    return FrontDoor(data, version, lambda: planner.config() is not None, asyncio.Event())


def _load_app(data: Path, repair: Repair, *, checked: bool) -> type[SidecarApp]:
    """Repair and check the database (unless `checked` already), then import the app and
    everything it wires (blocking: run it off the event loop).

    Raises:
        DatabaseDamagedError, DiskFullError, OSError: see `prepare_database`.
    """
    if not checked:
        prepare_database(data / DATABASE_NAME, repair)
    from sidecar.app import SidecarApp

    return SidecarApp


async def open_app(
    data: Path,
    repair: Repair,
    writer: FrameWriter,
    server: RpcServer,
    lock: DataFolderLock,
    *,
    checked: bool,
    freeze_heap: bool,
) -> SidecarApp:
    """The app on the data folder whose `lock` the caller holds: its database checked (unless
    `checked` already) and the app imported off the event loop, then the database opened
    (migrated where it is older) and the app built on it (`freeze_heap`: see `sidecar.heap`).

    Raises:
        NewerSchemaError, DatabaseDamagedError, and on a full disk `DiskFullError`, `OSError`
        or `sqlite3.Error` (see `sidecar.store.disk`).
    """
    app_type = await asyncio.to_thread(_load_app, data, repair, checked=checked)
    from sidecar.store import open_database
    from sidecar.store.health import mark_used

    db = open_database(data / DATABASE_NAME)
    try:
        app = app_type(data, db, writer, server, lock, version=version(), freeze_heap=freeze_heap)
    except BaseException:
        db.close()
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
    serve this data folder is refused (`refuse`: exit `EXIT_REFUSED`, no traceback): a folder
    in use, or a repair the window asked for that failed, before any reply; a database it
    cannot open as soon as that is known."""
    started = time.perf_counter()
    repair = repair or Repair()
    try:
        lock = ownership.acquire(data)
    except Exception as exc:  # the process boundary: refusals answered, the rest raised
        refuse_start(exc, data)
    if repair.asked:  # the window waits for what it asked for before anything else
        try:
            await asyncio.to_thread(prepare_database, data / DATABASE_NAME, repair)
        except Exception as exc:  # the process boundary: refusals answered, the rest raised
            lock.release()
            refuse_start(exc, data)
    writer = FrameWriter(stdout)
    door = front_door(data, version())
    routes = StagedRoutes(door.routes())
    server = RpcServer(routes, writer, gated=True)
    reading = asyncio.ensure_future(server.serve(read_frames(stdin)))
    try:
        app = await open_app(
            data, repair, writer, server, lock, checked=repair.asked, freeze_heap=freeze_heap
        )
    except BaseException as exc:
        reading.cancel()
        lock.release()
        if isinstance(exc, Exception):  # the process boundary: refusals answered, the rest raised
            refuse_start(exc, data)
        raise
    routes.open(app.routes)
    log.info("ready in %.0f ms", (time.perf_counter() - started) * 1000)
    if door.initialized.is_set():
        app.warm_up()
    await app.run(reading)


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


def refuse_start(exc: Exception, data: Path) -> NoReturn:
    """Refuse a start that cannot serve `data` (the folder in use, a newer or damaged database,
    a full disk); anything else is raised again.

    Raises:
        Exception: `exc`, when it is none of these.
    """
    # Refusals come from the database's modules: loaded by now when one was raised.
    from sidecar.store.db import NewerSchemaError
    from sidecar.store.disk import full_disk_folder
    from sidecar.store.health import DatabaseDamagedError

    if isinstance(exc, NewerSchemaError | DataFolderInUseError):
        refuse(str(exc))  # the author must change something
    if isinstance(exc, DatabaseDamagedError):
        refuse_storage(damaged_refusal(exc))
    folder = full_disk_folder(exc, data)
    if folder is None:
        raise exc
    refuse_storage(
        StorageRefusal(
            problem="disk_full",
            database=str(data / DATABASE_NAME),
            detail=disk_full_message(str(folder)),
        )
    )


def damaged_refusal(exc: DatabaseDamagedError) -> StorageRefusal:
    from sidecar.store.files import DatabaseFiles

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
    from sidecar.store.files import DatabaseFiles

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
