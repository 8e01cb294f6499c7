"""Run the workspace server standalone over stdio.

``python -m mcp_servers.workspace [--root DIR] [--http HOST:PORT]`` or ``atrium-mcp-workspace``.
The root is ``--root``, else ``$ATRIUM_WORKSPACE``, else the current directory. Logs go to
stderr; stdout carries MCP frames only. With ``--http`` it serves streamable HTTP instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_servers.lifeline import die_with_parent
from mcp_servers.serving import add_http_option, serve

from .server import build_server


def parse_root(argv: Sequence[str] | None = None) -> Path:
    """The workspace root chosen by the command line and environment."""
    return parse_args(argv).root


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; `root` is always filled in."""
    parser = argparse.ArgumentParser(
        prog="atrium-mcp-workspace", description="Atrium workspace MCP server (stdio)."
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help="workspace root (default: $ATRIUM_WORKSPACE or the current directory)",
    )
    add_http_option(parser)
    args = parser.parse_args(argv)
    if args.root is None:
        env = os.environ.get("ATRIUM_WORKSPACE")
        args.root = Path(env) if env else Path.cwd()
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: serve the workspace over stdio until the client disconnects."""
    die_with_parent()
    args = parse_args(argv)
    try:
        server = build_server(args.root)
    except NotADirectoryError as exc:
        print(f"atrium-mcp-workspace: {exc}", file=sys.stderr)
        return 2
    serve(server, args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
