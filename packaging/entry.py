"""Entry point of the bundled app: one executable, several roles chosen by the first argument."""

from __future__ import annotations

import sys


def main() -> None:
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role == "--sidecar":
        from sidecar.__main__ import main as run
    elif role == "--mcp-workspace":
        del sys.argv[1]
        from mcp_servers.workspace.__main__ import main as run
    elif role == "--mcp-sandbox":
        del sys.argv[1]
        from mcp_servers.sandbox.__main__ import main as run
    elif role == "--mcp-agents":
        del sys.argv[1]
        from mcp_servers.agents.__main__ import main as run
    else:
        from desktop.app import main as run
    run()


if __name__ == "__main__":
    main()
