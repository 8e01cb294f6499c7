"""Run the agents server standalone over stdio.

``python -m mcp_servers.agents [--trace-dir DIR] [--heartbeat S]`` or ``atrium-mcp-agents``.
CLIs are found on PATH or through ATRIUM_CLAUDE_BIN / ATRIUM_CODEX_BIN / ATRIUM_OPENCLAW_BIN;
traces go to ``--trace-dir``, else ``$ATRIUM_DATA_DIR/traces``, else the user data dir. Logs go
to stderr; stdout carries MCP frames only.
With ``--http HOST:PORT`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_servers.agents.server import build_server
from mcp_servers.lifeline import die_with_parent
from mcp_servers.serving import add_http_option, serve


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="atrium-mcp-agents",
        description="Atrium strong-agent MCP server (Claude Code, Codex, OpenClaw) over stdio.",
    )
    parser.add_argument("--trace-dir", type=Path, default=None, help="where run traces go")
    parser.add_argument(
        "--heartbeat", type=float, default=15.0, help="seconds of quiet before a heartbeat"
    )
    add_http_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: serve over stdio until the client disconnects."""
    die_with_parent()
    args = parse_args(argv)
    serve(build_server(trace_dir=args.trace_dir, heartbeat_interval_s=args.heartbeat), args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
