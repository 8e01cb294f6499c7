"""A tiny real MCP server over stdio for the transport tests and the large-result benchmark.

Run as `python tests/sidecar/host/stdio_server.py [--encoding NAME]`. Tools:
`blob(size, unit)` returns a text of exactly `size` UTF-8 bytes made of `unit` repeated;
`echo(text)`; `say_stderr(text)` writes a line to stderr; `environment()` lists the server's
environment variable names; `garbage()` writes malformed lines onto the wire first;
`hang()` writes `hanging` to stderr and never returns; `spawn_sleeper()` starts a child that
inherits stdout and sleeps (a server that leaves a child holding the pipe), returning its pid.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent


def build_server(wire: anyio.AsyncFile[str]) -> MCPServer:
    """The server; `wire` is its stdout, shared with `garbage` to write raw lines between
    messages."""
    server = MCPServer("stdio-test")

    @server.tool(structured_output=False)
    def blob(size: int, unit: str = "x") -> CallToolResult:
        text = unit * (size // len(unit.encode())) + "x" * (size % len(unit.encode()))
        return CallToolResult(content=[TextContent(type="text", text=text)])

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        return text

    @server.tool(structured_output=False)
    def say_stderr(text: str) -> str:
        print(text, file=sys.stderr, flush=True)
        return "said"

    @server.tool(structured_output=False)
    def environment() -> str:
        return "\n".join(sorted(os.environ))

    @server.tool(structured_output=False)
    async def garbage() -> str:
        await wire.write("this is not json\n")
        await wire.write('{"jsonrpc": "2.0", "method": 12}\n')
        await wire.write("   \n")
        await wire.flush()
        return "after garbage"

    @server.tool(structured_output=False)
    async def hang() -> str:
        print("hanging", file=sys.stderr, flush=True)
        await anyio.sleep_forever()
        return "never"

    @server.tool(structured_output=False)
    def spawn_sleeper() -> str:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.DEVNULL
        )
        return str(child.pid)

    return server


async def _serve(encoding: str) -> None:
    # Our own text layers over duplicates of fds 0 and 1: fd 1 stays the real pipe, so children
    # inherit it, and `garbage` can write to the wire.
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding=encoding))
    wire = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding=encoding))
    lowlevel = build_server(wire)._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    async with stdio_server(stdin=stdin, stdout=wire) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--encoding", default="utf-8")
    anyio.run(_serve, parser.parse_args().encoding)
