"""Run the sandbox server standalone over stdio.

``python -m mcp_servers.sandbox [--workdir DIR] [--timeout S] [--memory-mb N] [--max-processes N]
[--disk-quota-mb N] [--keep-runs N] [--confinement auto|bubblewrap|unshare|sandbox_exec|guard_only]
[--allow-guard-only]`` or ``atrium-mcp-sandbox``. The workdir is ``--workdir``, else
``$ATRIUM_SANDBOX_WORKDIR``, else a new temporary directory. ``--allow-guard-only`` (or
``$ATRIUM_SANDBOX_ALLOW_GUARD_ONLY=1``) lets the server run code with the in-process guard alone
where no OS-level sandbox works, instead of refusing. Logs go to stderr; stdout carries MCP frames
only.
With ``--http HOST:PORT`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mcp_servers.lifeline import die_with_parent
from mcp_servers.serving import add_http_option, serve

from .confinement import CHOICES
from .server import build_server


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line; ``workdir`` is always filled in."""
    parser = argparse.ArgumentParser(
        prog="atrium-mcp-sandbox", description="Atrium Python sandbox MCP server (stdio)."
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where run directories go")
    parser.add_argument("--timeout", type=float, default=30.0, help="max seconds per run")
    parser.add_argument("--memory-mb", type=int, default=512, help="address-space limit per run")
    parser.add_argument(
        "--max-processes", type=int, default=32, help="processes and threads per run"
    )
    parser.add_argument("--disk-quota-mb", type=int, default=256, help="total written per run")
    parser.add_argument("--keep-runs", type=int, default=50, help="run folders kept")
    parser.add_argument(
        "--confinement", choices=CHOICES, default="auto", help="the OS-level sandbox to use"
    )
    parser.add_argument(
        "--allow-guard-only",
        action="store_true",
        default=None,
        help="where no OS-level sandbox works, run with the in-process guard only (escapable)",
    )
    add_http_option(parser)
    args = parser.parse_args(argv)
    if args.workdir is None:
        env = os.environ.get("ATRIUM_SANDBOX_WORKDIR")
        args.workdir = Path(env) if env else Path(tempfile.mkdtemp(prefix="atrium-sandbox-"))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: serve the sandbox over stdio until the client disconnects."""
    die_with_parent()
    args = parse_args(argv)
    server = build_server(
        args.workdir,
        timeout_s=args.timeout,
        memory_mb=args.memory_mb,
        max_processes=args.max_processes,
        disk_quota_mb=args.disk_quota_mb,
        keep_runs=args.keep_runs,
        confinement=args.confinement,
        allow_guard_only=args.allow_guard_only,
    )
    serve(server, args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
