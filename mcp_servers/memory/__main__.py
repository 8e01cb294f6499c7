"""Run the memory server standalone over stdio, on a file of its own.

``python -m mcp_servers.memory [--db FILE] [--workspace DIR] [--thread NAME] [--channel NAME]``
or ``atrium-mcp-memory``. The file defaults to ``$ATRIUM_MEMORY_DB``, else ``memory.db`` in the
current directory (an explicit path, never a package's install folder). Several processes may
serve the same file at once: each write is one SQLite transaction, and writers wait for each
other instead of overwriting each other. Logs go to stderr; stdout carries MCP frames only.
With ``--http HOST:PORT`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` instead.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_servers.serving import add_http_option, serve

from .server import build_server
from .store import MemoryStore, Scope


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="atrium-mcp-memory", description="Atrium memory MCP server (stdio)."
    )
    default_db = os.environ.get("ATRIUM_MEMORY_DB") or "memory.db"
    parser.add_argument("--db", type=Path, default=Path(default_db), help="the SQLite file")
    parser.add_argument(
        "--workspace", default=None, help="workspace tier's folder (default: current directory)"
    )
    parser.add_argument("--thread", default="default", help="thread tier's conversation name")
    parser.add_argument("--channel", default=None, help="channel tier's name (none by default)")
    add_http_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: serve memories over stdio until the client disconnects."""
    args = parse_args(argv)
    workspace = args.workspace or str(Path.cwd().resolve())
    try:
        store = MemoryStore.open(args.db.expanduser().resolve())
    except (sqlite3.DatabaseError, OSError) as exc:
        print(f"atrium-mcp-memory: cannot open {args.db}: {exc}", file=sys.stderr)
        return 2
    scope = Scope(thread=args.thread, channel=args.channel, workspace=workspace)
    try:
        serve(build_server(store, scope), args.http)
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
