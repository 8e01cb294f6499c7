"""The sidecar's start: `initialize` and `ping` are answered while the rest of the sidecar (and
the database's check) is still loading; every other request waits for the app and is then
answered by it; a `shutdown` stops it cleanly and lets the data folder go."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sidecar import startup
from sidecar.protocol import ErrorCode
from sidecar.runtime import ownership
from sidecar.store import files
from tests.sidecar.rpc.streams import CaptureTransport

pytestmark = pytest.mark.anyio

REPLY_S = 60.0


@dataclass
class Wire:
    """The sidecar's stdin (fed by the test) and its stdout (captured, a frame at a time)."""

    stdin: asyncio.StreamReader
    stdout: asyncio.StreamWriter
    transport: CaptureTransport

    def send(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> None:
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        self.stdin.feed_data(json.dumps(frame).encode() + b"\n")

    async def replies(self, count: int) -> dict[int, dict[str, Any]]:
        got: dict[int, dict[str, Any]] = {}
        async with asyncio.timeout(REPLY_S):
            while len(got) < count:
                frame = await self.transport.frames.get()
                if "id" in frame:
                    got[frame["id"]] = frame
        return got


@pytest.fixture
async def wire() -> AsyncIterator[Wire]:
    transport = CaptureTransport()
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    stdout = asyncio.StreamWriter(transport, protocol, None, asyncio.get_running_loop())
    yield Wire(asyncio.StreamReader(), stdout, transport)
    transport.close()


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.setenv("ATRIUM_WORKSPACE", str(workspace))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for name in ("ATRIUM_MODEL", "ATRIUM_MODEL_API_KEY", "ATRIUM_MODEL_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


class HeldImport:
    """Holds the app's import (in its worker thread) until the test releases it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        real = startup._load_app  # pyright: ignore[reportPrivateUsage]

        def held(data: Path, repair: startup.Repair, *, checked: bool) -> Any:
            self.started.set()
            self.release.wait(REPLY_S)
            return real(data, repair, checked=checked)

        monkeypatch.setattr(startup, "_load_app", held)


async def test_initialize_and_ping_answer_while_the_app_is_imported(
    wire: Wire, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldImport(monkeypatch)
    serving = asyncio.ensure_future(startup.serve(wire.stdin, wire.stdout, data))

    wire.send(1, "initialize", {"client_name": "test"})
    wire.send(2, "ping")
    wire.send(3, "thread/list")
    early = await wire.replies(2)

    assert held.started.is_set() and not held.release.is_set()
    assert early[1]["result"]["data_dir"] == str(data)
    assert early[1]["result"]["model_configured"] is False
    assert early[2]["result"] == {}
    assert wire.transport.frames.empty()  # thread/list waits for the app

    held.release.set()
    later = await wire.replies(1)
    assert later[3]["result"]["threads"] == []

    # The warm-up `initialize` began connects the MCP servers; shut down once they are.
    wire.send(4, "tool/list")
    wire.send(5, "shutdown")
    done = await wire.replies(2)
    assert done[4]["result"]["tools"] and done[5]["result"] == {}
    wire.stdin.feed_eof()
    async with asyncio.timeout(REPLY_S):
        await serving
    ownership.acquire(data).release()  # the data folder was let go


def test_the_start_up_names_the_database_file_as_the_store_does() -> None:
    assert startup.DATABASE_NAME == files.DATABASE_NAME


async def test_a_request_before_initialize_is_refused_as_ever(
    wire: Wire, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldImport(monkeypatch)
    serving = asyncio.ensure_future(startup.serve(wire.stdin, wire.stdout, data))

    wire.send(1, "thread/list")
    wire.send(2, "initialize", {"client_name": "test", "protocol_version": "9.0"})
    held.release.set()
    replies = await wire.replies(2)

    assert replies[1]["error"]["code"] == ErrorCode.NOT_INITIALIZED
    assert replies[2]["error"]["code"] == ErrorCode.INVALID_PARAMS  # another major version
    wire.stdin.feed_eof()
    async with asyncio.timeout(REPLY_S):
        await serving
