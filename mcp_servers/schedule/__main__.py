"""Run the schedule server standalone over stdio.

``python -m mcp_servers.schedule [--db FILE] [--timezone ZONE]`` or ``atrium-mcp-schedule``.
The database is ``--db``, else ``$ATRIUM_DATA_DIR/atrium.db``, else Atrium's data folder. A
running Atrium on that folder fires the schedules; this server only edits them.
With ``--http HOST:PORT`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` instead.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from mcp_servers.lifeline import die_with_parent
from mcp_servers.serving import add_http_option, serve
from mcp_servers.shared_file import setting_up

from .book import ScheduleBook
from .errors import ScheduleRefusal
from .server import build_server
from .timing import local_zone_name, zone


def default_db() -> Path:
    data = os.environ.get("ATRIUM_DATA_DIR")
    root = Path(data) if data else Path(platformdirs.user_data_dir("atrium", "atrium"))
    return root / "atrium.db"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="atrium-mcp-schedule", description="Atrium schedule MCP server (stdio)."
    )
    parser.add_argument("--db", type=Path, default=None, help="the database file")
    parser.add_argument("--timezone", default=None, help="default IANA zone of new schedules")
    add_http_option(parser)
    args = parser.parse_args(argv)
    die_with_parent()
    tz_name = args.timezone or local_zone_name()
    try:
        zone(tz_name)
    except ScheduleRefusal as exc:
        print(f"atrium-mcp-schedule: {exc.message}", file=sys.stderr)
        return 2
    path: Path = args.db or default_db()
    try:
        with setting_up(path, busy_timeout_ms=10_000) as conn:
            book = ScheduleBook(conn, default_timezone=tz_name)
    except (sqlite3.DatabaseError, OSError) as exc:
        print(f"atrium-mcp-schedule: cannot open {path}: {exc}", file=sys.stderr)
        return 2
    serve(build_server(book), args.http)
    return 0


if __name__ == "__main__":
    sys.exit(main())
