"""A tiny real MCP server for the host's tests, run over stdio: `python peer_server.py`.

Run with `--http PORT` to serve streamable HTTP on 127.0.0.1 instead.

Tools:
- `greet(name)`: its description is read at start from the file named by `$PEER_DESCRIPTION_FILE`
  (so a test can change it between runs: tool-definition drift);
- `token_digest()`: the sha256 of `$PEER_TOKEN`, after writing the token itself to stderr (a
  server that leaks its secret; the host must redact it);
- `wait()`: writes `waiting` to stderr and never returns (kill-mid-call and timeout tests);
- `whoami()`: the server's pid.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer


def _description() -> str:
    path = os.environ.get("PEER_DESCRIPTION_FILE")
    return Path(path).read_text(encoding="utf-8") if path else "Greet someone."


def build_server() -> MCPServer:
    server = MCPServer("peer")

    @server.tool(description=_description())
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.tool()
    def token_digest() -> str:
        """The sha256 of the token this server was given."""
        token = os.environ.get("PEER_TOKEN", "")
        print(f"my token is {token}", file=sys.stderr, flush=True)
        return hashlib.sha256(token.encode()).hexdigest()

    @server.tool()
    async def wait() -> str:
        """Never returns."""
        print("waiting", file=sys.stderr, flush=True)
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    def whoami() -> int:
        """This server's process id."""
        return os.getpid()

    return server


if __name__ == "__main__":
    print(f"peer server pid {os.getpid()}", file=sys.stderr, flush=True)
    if "--http" in sys.argv:  # streamable HTTP on 127.0.0.1:<port>/mcp
        port = int(sys.argv[sys.argv.index("--http") + 1])
        build_server().run("streamable-http", host="127.0.0.1", port=port)
    else:
        build_server().run("stdio")
