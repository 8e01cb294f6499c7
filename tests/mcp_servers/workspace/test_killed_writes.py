"""The workspace server killed mid-write (SIGKILL, as a killed sidecar is): the author's file is
the old one or the new one, never a part; the write's temporary file is never listed or searched,
and the next server to start removes it.

Each trial holds a real stdio server's write at its rename (`held_writes`), so the kill lands
mid-write every time, not by luck of timing; every other trial lets the rename go on as the kill
is sent, so the file may be either.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import LATEST_PROTOCOL_VERSION

from mcp_servers.workspace import build_server
from mcp_servers.workspace.fileio import is_temp_name
from mcp_servers.workspace.models import ListResult, SearchResult

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
TRIALS = int(os.environ.get("ATRIUM_WS_KILL_TRIALS", "10"))
OLD = "alpha\nbeta\ngamma\n"


class HeldServer:
    """A `held_writes` server process spoken to with raw MCP frames."""

    def __init__(self, proc: asyncio.subprocess.Process, release: int) -> None:
        self.proc = proc
        self._release = release

    @classmethod
    @asynccontextmanager
    async def start(cls, root: Path) -> AsyncIterator[HeldServer]:
        read_end, release = os.pipe()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.mcp_servers.workspace.held_writes",
            "--root",
            str(root),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(read_end,),
            env={**os.environ, "HELD_WRITES_FD": str(read_end)},
            cwd=REPO,
        )
        os.close(read_end)
        server = cls(proc, release)
        try:
            yield server
        finally:
            os.close(release)
            if proc.returncode is None:
                proc.kill()
            await proc.communicate()

    def send(self, frame: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **frame}).encode() + b"\n")

    async def initialize(self) -> None:
        client = {"name": "tests", "version": "0"}
        params = {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {}}
        self.send({"id": 1, "method": "initialize", "params": {**params, "clientInfo": client}})
        assert self.proc.stdout is not None
        reply = json.loads(await self.proc.stdout.readline())
        assert reply["id"] == 1 and "result" in reply, reply
        self.send({"method": "notifications/initialized"})

    async def held(self) -> str:
        """The name of the temporary file the server's write is held on."""
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            if line.startswith(b"held "):
                return line.split()[1].decode()
        raise AssertionError("the server ended before its write reached the rename")

    def release(self) -> None:
        os.write(self._release, b"x")

    async def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert await self.proc.wait() == -signal.SIGKILL


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if is_temp_name(p.name)]


async def listed_and_found(root: Path, query: str) -> tuple[list[str], list[str]]:
    """What a server started on `root` lists (recursively) and finds for `query`."""
    async with Client(build_server(root)) as client:
        listed = await client.call_tool("list", {"recursive": True})
        found = await client.call_tool("search", {"query": query})
    entries = ListResult.model_validate(listed.structured_content).entries
    matches = SearchResult.model_validate(found.structured_content).matches
    return [e.path for e in entries], [m.path for m in matches]


async def test_a_write_killed_mid_way_leaves_the_file_whole_and_nothing_listed(root: Path) -> None:
    target = root / "sub" / "a.txt"
    target.write_text(OLD)
    for trial in range(TRIALS):
        new = f"draft {trial}\n" * 50_000
        async with asyncio.timeout(60), HeldServer.start(root) as server:
            await server.initialize()
            assert temp_files(root) == []  # this start removed what the last kill left
            before = target.read_text()
            arguments = {"path": "sub/a.txt", "content": new}
            server.send(
                {
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "write", "arguments": arguments},
                }
            )
            held = await server.held()
            # Another server starting meanwhile leaves the live write's file and never shows it.
            listed, found = await listed_and_found(root, f"draft {trial}")
            assert (listed, found) == (["sub", "sub/a.txt"], [])
            assert [p.name for p in temp_files(root)] == [held]
            if trial % 2:
                server.release()  # the kill races the rename
            await server.kill()
        assert target.read_text() in (before, new)
        if trial % 2 == 0:
            assert target.read_text() == before
            assert [p.name for p in temp_files(root)] == [held]
    listed, _found = await listed_and_found(root, "draft")
    assert listed == ["sub", "sub/a.txt"] and temp_files(root) == []
