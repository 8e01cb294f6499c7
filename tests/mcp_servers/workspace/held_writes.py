"""The real workspace server over stdio, whose writes stop just before their rename.

``python -m tests.mcp_servers.workspace.held_writes --root DIR`` with ``HELD_WRITES_FD`` naming an
inherited pipe: when a write is about to rename its temporary file over the target (the file is
complete and still locked), the process writes ``held <name>`` on stderr and waits for a byte on
that pipe. A test kills it there (a kill mid-write, at a known point), or lets it go on.
"""

from __future__ import annotations

import os
import sys

from mcp_servers.workspace import __main__ as workspace_main
from mcp_servers.workspace.fileio import is_temp_name


def _hold_renames(release_fd: int) -> None:
    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "os.rename" and is_temp_name(str(args[0])):
            os.write(2, f"held {args[0]}\n".encode())
            os.read(release_fd, 1)

    sys.addaudithook(hook)


if __name__ == "__main__":
    _hold_renames(int(os.environ["HELD_WRITES_FD"]))
    sys.exit(workspace_main.main())
