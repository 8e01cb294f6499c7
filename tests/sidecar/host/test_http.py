"""A server reached over streamable HTTP on 127.0.0.1 (the peer MCPServer run with --http)."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator

import pytest

from sidecar.host.config import validate_entry
from sidecar.host.host import ToolHost
from sidecar.host.spec import ServerUnavailableError
from tests.sidecar.host.support import PEER_SCRIPT, StatusLog

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def http_peer() -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, PEER_SCRIPT, "--http", str(port), stderr=asyncio.subprocess.PIPE
    )
    assert proc.stderr is not None
    async with asyncio.timeout(30):
        while b"Uvicorn running" not in await proc.stderr.readline():
            pass
    yield proc, port
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


async def test_an_http_server_lists_and_answers_then_its_death_fails_calls_fast(
    host: ToolHost, statuses: StatusLog, http_peer: tuple[asyncio.subprocess.Process, int]
):
    proc, port = http_peer
    config = validate_entry(
        "remote", {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Atrium": "test"}}
    )
    await host.add(config)
    ready = await statuses.wait_state("remote", "ready")
    assert ready.transport == "http" and ready.pid is None
    assert (await host.call("remote__greet", {"name": "Ada"})).text == "Hello, Ada!"
    proc.kill()
    await proc.wait()
    mark = statuses.mark()
    async with asyncio.timeout(5):
        with pytest.raises(ServerUnavailableError):
            await host.call("remote__whoami", {})
    await statuses.wait_state("remote", "backoff", since=mark)
