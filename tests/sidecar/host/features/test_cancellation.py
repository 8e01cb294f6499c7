"""A cancelled call tells the server: `notifications/cancelled` for the call's request id, seen
on the wire between the host and the real server-everything (stdio, through a wiretap)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from sidecar.binding.calls import RunBinding, bind_run, in_flight
from sidecar.host.features.client import HostFeatures
from sidecar.host.host import ServerSpec, ToolHost
from tests.setup.mcp_everything import Everything
from tests.sidecar.host.features.conftest import SERVER, ScriptedAuthor, stdio_params

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

WIRETAP = Path(__file__).with_name("wiretap.py")


class Tap:
    """What the host wrote to the server, one JSON-RPC message per line."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async for line in reader:
            self.messages.append(json.loads(line))
            self.changed.set()
        writer.close()

    async def wait_for(self, method: str, **params: Any) -> dict[str, Any]:
        with anyio.fail_after(20):
            while True:
                for message in self.messages:
                    got = message.get("params") or {}
                    if message.get("method") == method and params.items() <= got.items():
                        return message
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
async def tapped_host(
    everything: Everything, tmp_path: Path
) -> AsyncIterator[tuple[ToolHost, HostFeatures, Tap]]:
    tap = Tap()
    listener = await asyncio.start_server(tap.on_connect, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    command = [sys.executable, str(WIRETAP), str(port), *everything.stdio_command()]
    features = HostFeatures(tmp_path)
    spec = ServerSpec(SERVER, lambda: stdio_params(everything, command), transport="stdio")
    host = ToolHost([spec], features=features)
    await host.wait_ready()
    yield host, features, tap
    await host.aclose()
    listener.close()
    await listener.wait_closed()


async def test_a_cancelled_call_sends_notifications_cancelled_for_its_request(
    tapped_host: tuple[ToolHost, HostFeatures, Tap],
) -> None:
    host, features, tap = tapped_host
    progressed = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async def call() -> None:
        binding = RunBinding("thread-1", "run-1", features.calls, ScriptedAuthor())
        with bind_run(binding), in_flight(SERVER, "c1"):
            await host.call(
                f"{SERVER}__trigger-long-running-operation",
                {"duration": 60, "steps": 120},
                on_progress,
            )

    task = asyncio.create_task(call())
    with anyio.fail_after(20):
        await progressed.wait()
    request = await tap.wait_for("tools/call", name="trigger-long-running-operation")
    assert request["params"]["_meta"]["progressToken"] == request["id"]

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    cancelled = await tap.wait_for("notifications/cancelled", requestId=request["id"])
    assert cancelled["params"]["requestId"] == request["id"]
    assert features.calls.owner(SERVER) is None
