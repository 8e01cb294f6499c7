"""Atrium's six built-in MCP servers for tests that look at all of them alike: each built in
memory on a temporary folder (`built_in_servers`), and each started as its own process over
streamable HTTP with `--http` (`http_server`, `HTTP_COMMANDS`)."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

SERVERS = ("workspace", "memory", "schedule", "skills", "sandbox", "agents")


def built_in_servers(tmp: Path) -> Iterator[tuple[str, Any]]:
    """(name, MCPServer) of each built-in server, on folders and files under `tmp`."""
    from mcp_servers.agents.server import build_server as agents
    from mcp_servers.memory import MemoryStore
    from mcp_servers.memory import build_server as memory
    from mcp_servers.sandbox import build_server as sandbox
    from mcp_servers.schedule import ScheduleBook
    from mcp_servers.schedule import build_server as schedule
    from mcp_servers.shared_file import setting_up
    from mcp_servers.skills import build_server as skills
    from mcp_servers.skills import default_roots
    from mcp_servers.workspace import build_server as workspace

    root = tmp / "workspace"
    root.mkdir(exist_ok=True)
    yield "workspace", workspace(root)
    yield "memory", memory(MemoryStore.open(tmp / "memory.db"))
    with setting_up(tmp / "schedule.db", busy_timeout_ms=10_000) as conn:
        book = ScheduleBook(conn, default_timezone="UTC")
    yield "schedule", schedule(book)
    yield "skills", skills(default_roots(root, tmp / "skills"), sandbox_dir=tmp / "skill-runs")
    yield "sandbox", sandbox(tmp / "sandbox")
    yield "agents", agents(trace_dir=tmp / "traces")


def http_command(name: str, tmp: Path, address: str) -> list[str]:
    """The command line that serves built-in server `name` at `address` (HOST:PORT)."""
    folders = {
        "workspace": ["--root", str(tmp)],
        "memory": ["--db", str(tmp / "memory.db"), "--workspace", str(tmp)],
        "schedule": ["--db", str(tmp / "schedule.db"), "--timezone", "UTC"],
        "skills": ["--workspace", str(tmp), "--account-dir", str(tmp / "skills")],
        "sandbox": ["--workdir", str(tmp / "sandbox")],
        "agents": ["--trace-dir", str(tmp / "traces")],
    }
    return [sys.executable, "-m", f"mcp_servers.{name}", *folders[name], "--http", address]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _killed(proc: asyncio.subprocess.Process) -> Iterator[None]:
    try:
        yield
    finally:
        if proc.returncode is None:
            proc.kill()


@asynccontextmanager
async def http_server(name: str, tmp: Path) -> AsyncIterator[str]:
    """Serve built-in server `name` over HTTP on a free 127.0.0.1 port until the block ends;
    yields its URL once uvicorn says it is listening."""
    port = free_port()
    command = http_command(name, tmp, f"127.0.0.1:{port}")
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,  # uvicorn's access log
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    with _killed(proc):
        async with asyncio.timeout(60):
            while b"Uvicorn running" not in (line := await proc.stderr.readline()):
                assert line, f"{name} exited before it listened"
        drain = asyncio.ensure_future(proc.stderr.read())
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
            await drain
