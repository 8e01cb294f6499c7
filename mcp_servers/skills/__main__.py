"""Run the skills server standalone over stdio.

``python -m mcp_servers.skills [--workspace DIR] [--account-dir DIR]`` or ``atrium-mcp-skills``.
Skills are read from the workspace's ``.agents/skills`` and ``.claude/skills`` and the account's
skills folder (default: the platform's data folder, ``skills``), in that order of precedence.
With ``--http HOST:PORT`` it serves streamable HTTP at ``http://HOST:PORT/mcp`` instead.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from mcp_servers.lifeline import die_with_parent
from mcp_servers.serving import add_http_option, serve
from mcp_servers.skills.catalog import default_roots
from mcp_servers.skills.server import build_server


def account_skills_dir() -> Path:
    """The account's skills folder (platformdirs: e.g. ~/.local/share/atrium/skills)."""
    return Path(platformdirs.user_data_dir("atrium", "atrium")) / "skills"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: serve skills over stdio until the client disconnects."""
    die_with_parent()
    parser = argparse.ArgumentParser(prog="atrium-mcp-skills", description=__doc__)
    parser.add_argument("--workspace", type=Path, default=None)
    parser.add_argument("--account-dir", type=Path, default=None)
    add_http_option(parser)
    args = parser.parse_args(argv)
    workspace = args.workspace or Path(os.environ.get("ATRIUM_WORKSPACE") or Path.cwd())
    roots = default_roots(workspace, args.account_dir or account_skills_dir())
    sandbox = Path(tempfile.mkdtemp(prefix="atrium-skills-"))
    serve(build_server(roots, sandbox_dir=sandbox), args.http)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
