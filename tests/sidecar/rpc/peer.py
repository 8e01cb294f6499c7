"""A test peer for RpcServer: writes frames into its reader and reads its replies.

The routes mix small test handlers (echo, slow, fail, crash) with real ones from the handler
registry (`ping`, `initialize`), bound to real services over a SQLite file.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from sidecar.handlers.services import Services
from sidecar.handlers.table import load_all
from sidecar.host.features.client import HostFeatures
from sidecar.host.host import ToolHost
from sidecar.llm.types import Planner
from sidecar.model_key import ModelKey
from sidecar.protocol import (
    CANCEL_REQUEST,
    ErrorCode,
    NotifyParams,
    QueuedMessageInfo,
    RpcError,
    RunEventParams,
    WireModel,
)
from sidecar.rpc.framing import MAX_FRAME_BYTES, read_frames
from sidecar.rpc.server import Route, RpcServer
from sidecar.runtime.automation import Automation
from sidecar.runtime.clock import SystemClock
from sidecar.runtime.emitter import EventSink
from sidecar.runtime.live import LiveInterrupts
from sidecar.settings import SettingsFile
from sidecar.store import Store, open_database
from tests.sidecar.rpc.streams import Capture
from tests.sidecar.runtime.wiring import wire_runtime

REPLY_TIMEOUT_S = 10


class EchoParams(WireModel):
    text: str
    times: int = 1


class EchoResult(WireModel):
    text: str


class SlowParams(WireModel):
    key: str


class Unserialisable(WireModel):
    value: Any


class Gate:
    """Lets a test see a slow handler start, release it, and see it cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()


class ScriptedRoutes:
    """Handlers whose behaviour the tests control."""

    def __init__(self) -> None:
        self.gates: defaultdict[str, Gate] = defaultdict(Gate)

    async def echo(self, params: EchoParams) -> EchoResult:
        return EchoResult(text=params.text * params.times)

    async def slow(self, params: SlowParams) -> EchoResult:
        gate = self.gates[params.key]
        gate.started.set()
        try:
            await gate.release.wait()
        except asyncio.CancelledError:
            gate.cancelled.set()
            raise
        return EchoResult(text=params.key)

    async def fail(self, params: EchoParams) -> EchoResult:
        raise RpcError(ErrorCode.THREAD_BUSY, params.text, {"thread_id": "t-1", "n": [1, 2]})

    async def crash(self, params: EchoParams) -> EchoResult:
        raise RuntimeError(params.text)

    async def bad_result(self, params: EchoParams) -> Unserialisable:
        del params
        return Unserialisable(value=object())

    def routes(self) -> dict[str, Route]:
        return {
            "test/echo": Route(EchoParams, self.echo),
            "test/slow": Route(SlowParams, self.slow),
            "test/fail": Route(EchoParams, self.fail),
            "test/crash": Route(EchoParams, self.crash),
            "test/bad_result": Route(EchoParams, self.bad_result),
        }


async def _ignore_workspace(root: Path) -> None:
    del root


def _no_model() -> Planner | None:
    return None


def _drop(params: RunEventParams) -> None:
    del params


def build_services(
    data: Path,
    *,
    planner: Callable[[], Planner | None] = _no_model,
    sink: EventSink = _drop,
    notify_queue: Callable[[QueuedMessageInfo], None] | None = None,
    notify_automation: Callable[[NotifyParams], None] | None = None,
) -> Services:
    """Real services over a fresh SQLite file, every part wired as `sidecar.app` wires it (no
    MCP servers; by default no model is configured, so a turn runs direct commands only)."""
    store = Store(open_database(data / "atrium.db"))
    workspace = data / "ws"
    workspace.mkdir(exist_ok=True)
    features = HostFeatures(workspace)
    host = ToolHost([], features=features)
    wired = wire_runtime(
        store,
        host,
        planner,
        sink,
        data,
        workspace=workspace,
        live=LiveInterrupts(store, features.calls),
        notify_queue=notify_queue or (lambda _message: None),
    )
    automation = Automation(
        store,
        wired.runs,
        wired.queue,
        wired.automation_settings,
        lambda: workspace,
        notify_automation or (lambda _params: None),
        SystemClock(),
        "UTC",
    )
    return Services(
        store=store,
        runs=wired.runs,
        host=host,
        settings=SettingsFile(data / "settings.json"),
        model_key=ModelKey(data),
        data_dir=data,
        version="9.9.9",
        model_configured=lambda: planner() is not None,
        workspace_changed=_ignore_workspace,
        warm_up=lambda: None,
        features=features,
        profiles=wired.profiles,
        coordinator=wired.coordinator,
        queue=wired.queue,
        memory=wired.memory.get,
        automation=automation,
        automation_settings=wired.automation_settings,
        team=wired.team,
    )


async def close_services(services: Services) -> None:
    """Stop what the services may have started (turns, queued deliveries, background plans,
    schedules), then close the database."""
    await services.automation.aclose()
    await services.queue.aclose()
    await services.team.aclose()
    await services.runs.shutdown()
    services.store.db.close()


def registry_routes(services: Services, names: tuple[str, ...]) -> dict[str, Route]:
    bound = load_all().bind(services)
    return {name: Route(bound[name].params, bound[name].handler) for name in names}


class Peer:
    """The desktop's end of the pipe, in process."""

    def __init__(
        self,
        routes: dict[str, Route],
        capture: Capture,
        *,
        max_bytes: int = MAX_FRAME_BYTES,
        gated: bool = False,
    ) -> None:
        self.reader = asyncio.StreamReader()
        self.capture = capture
        self.server = RpcServer(routes, capture.writer, gated=gated)
        self.serving = asyncio.ensure_future(
            self.server.serve(read_frames(self.reader, max_bytes=max_bytes))
        )
        self._ids = iter(range(1, 1_000_000))

    def send_raw(self, data: bytes) -> None:
        self.reader.feed_data(data)

    def send(self, *messages: object) -> None:
        """Write each message as one line, all in a single chunk."""
        self.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def request_frame(
        self, method: str, params: object = None, *, request_id: object = None
    ) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": f"auto-{next(self._ids)}" if request_id is None else request_id,
            "method": method,
        }
        if params is not None:
            frame["params"] = params
        return frame

    @staticmethod
    def notification_frame(method: str, params: object = None) -> dict[str, Any]:
        frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        return frame

    def cancel(self, request_id: object) -> None:
        self.send(self.notification_frame(CANCEL_REQUEST, {"id": request_id}))

    async def receive(self) -> Any:
        with anyio.fail_after(REPLY_TIMEOUT_S):
            return await self.capture.transport.frames.get()

    async def call(
        self, method: str, params: object = None, *, request_id: object = None
    ) -> dict[str, Any]:
        """Send one request and return its reply (which must be the next frame)."""
        frame = self.request_frame(method, params, request_id=request_id)
        self.send(frame)
        reply = await self.receive()
        assert reply["id"] == frame["id"], reply
        return reply

    async def assert_alive(self) -> None:
        """A ping still gets its reply, and it is the next frame: nothing else was pending."""
        reply = await self.call("ping")
        assert reply == {"jsonrpc": "2.0", "id": reply["id"], "result": {}}

    async def close(self) -> None:
        self.reader.feed_eof()
        with anyio.fail_after(REPLY_TIMEOUT_S):
            await self.serving

    def unread(self) -> list[Any]:
        frames: list[Any] = []
        while not self.capture.transport.frames.empty():
            frames.append(self.capture.transport.frames.get_nowait())
        return frames


def error_code(reply: dict[str, Any]) -> int:
    assert "result" not in reply, reply
    return reply["error"]["code"]
