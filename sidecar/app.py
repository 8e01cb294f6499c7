"""The sidecar's composition root: logging, database, MCP host, runtime, RPC over stdio."""

from __future__ import annotations

import asyncio
import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from sidecar import settings as settings_mod
from sidecar.handlers.registry import load_all
from sidecar.handlers.services import Services
from sidecar.host.host import ServerSpec, ToolHost
from sidecar.llm.planner import DspyPlanner, aclose_model_clients
from sidecar.llm.types import LMConfig
from sidecar.rpc.framing import FrameWriter, read_frames
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime.runs import RunManager
from sidecar.store import Store, open_database

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


def workspace_spec(root: Path) -> ServerSpec:
    def target() -> Any:
        from mcp_servers.workspace import build_server

        return build_server(root)

    return ServerSpec(name="workspace", target=target, trusted=True)


def sandbox_spec(workdir: Path) -> ServerSpec:
    def target() -> Any:
        from mcp import StdioServerParameters

        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
        # A bundled app is one executable that takes its role from the first argument.
        role = ["--mcp-sandbox"] if getattr(sys, "frozen", False) else ["-m", "mcp_servers.sandbox"]
        return StdioServerParameters(
            command=sys.executable, args=[*role, "--workdir", str(workdir)], env=env
        )

    return ServerSpec(name="sandbox", target=target, trusted=True)


class PlannerProvider:
    """Resolves the model configuration on every turn (settings may have changed) and reuses a
    planner for as long as the configuration stays the same."""

    def __init__(self, settings: settings_mod.SettingsFile, env: Mapping[str, str]) -> None:
        self._settings = settings
        self._env = env
        self._cached: tuple[LMConfig, DspyPlanner] | None = None

    def config(self) -> LMConfig | None:
        from sidecar.llm.config import resolve_lm_config

        saved = self._settings.load()
        return resolve_lm_config(saved.model, saved.api_base, self._env, _keyring_lookup)

    def __call__(self) -> DspyPlanner | None:
        config = self.config()
        if config is None:
            return None
        if self._cached is None or self._cached[0] != config:
            self._cached = (config, DspyPlanner(config))
        return self._cached[1]


def _keyring_lookup(name: str) -> str | None:
    del name
    return settings_mod.keyring_get()


def _how_to_configure() -> str:
    from sidecar.llm.config import describe_how_to_configure

    return describe_how_to_configure()


async def serve(stdin: asyncio.StreamReader, stdout: asyncio.StreamWriter, data: Path) -> None:
    """Run the sidecar until EOF on stdin or a `shutdown` request."""
    db = open_database(data / "atrium.db")
    store = Store(db)
    settings_file = settings_mod.SettingsFile(data / "settings.json")
    workspace = settings_mod.resolve_workspace(settings_file.load(), os.environ, data)
    host = ToolHost([workspace_spec(workspace), sandbox_spec(data / "sandbox")])
    planner = PlannerProvider(settings_file, os.environ)
    writer = FrameWriter(stdout)
    server_box: list[RpcServer] = []

    async def graph_factory() -> tuple[Any, Any]:
        from sidecar.graph.builder import build_graph
        from sidecar.graph.deps import GraphDeps
        from sidecar.runtime.checkpoints import open_checkpointer

        saver = open_checkpointer(db.conn)
        deps = GraphDeps(store, host, planner, _how_to_configure)
        graph: Any = build_graph(deps)
        return graph.compile(checkpointer=saver), saver

    runs = RunManager(store, lambda p: server_box[0].notify("run/event", p), graph_factory)
    runs.recover_after_crash()

    warm: list[asyncio.Task[None]] = []

    def warm_up() -> None:
        """Pay for the heavy imports in the background once the desktop is talking to us, so
        the first turn does not."""
        if warm:
            return
        host.start()

        async def load() -> None:
            await runs.compiled()
            model = planner()
            if model is not None:
                await model.warm_up()

        warm.append(asyncio.ensure_future(load()))

    async def workspace_changed(root: Path) -> None:
        await host.replace(workspace_spec(root))

    services = Services(
        store=store,
        runs=runs,
        host=host,
        settings=settings_file,
        data_dir=data,
        version=version(),
        model_configured=lambda: planner.config() is not None,
        warm_up=warm_up,
        workspace_changed=workspace_changed,
    )
    routes = {
        name: Route(bound.params, bound.handler)
        for name, bound in load_all().bind(services).items()
    }
    server = RpcServer(routes, writer)
    server_box.append(server)
    stopper = asyncio.ensure_future(_close_on_shutdown(services, server))
    try:
        await server.serve(read_frames(stdin))
    finally:
        stopper.cancel()
        log.info("stopping runs")
        await runs.shutdown()
        log.info("stopping MCP servers")
        await host.aclose()
        if warm:
            warm[0].cancel()
        await aclose_model_clients()
        db.close()
        log.info("sidecar stopped")


async def _close_on_shutdown(services: Services, server: RpcServer) -> None:
    await services.shutdown_requested.wait()
    server.closing.set()


async def _stdio(protocol_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def amain() -> None:
    # LiteLLM would otherwise fetch its model map from the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    protocol_fd = protect_stdout()
    data = settings_mod.data_dir()
    configure_logging(data)
    log.info("sidecar %s starting; data dir %s", version(), data)
    reader, writer = await _stdio(protocol_fd)
    await serve(reader, writer, data)
