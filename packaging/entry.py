"""Entry point of the bundled app: one executable, several roles chosen by the first argument.

`atrium` is the window; `atrium --sidecar` the sidecar; `atrium --mcp-<name>` a built-in MCP
server (the sidecar starts them this way, so the bundle needs no Python on PATH); `atrium
--python script` runs a script, which is how the sandbox starts its child in a bundle.
"""

from __future__ import annotations

import importlib
import os
import sys

ROLES = {
    "--sidecar": "sidecar.__main__",
    "--mcp-workspace": "mcp_servers.workspace.__main__",
    "--mcp-sandbox": "mcp_servers.sandbox.__main__",
    "--mcp-agents": "mcp_servers.agents.__main__",
    "--mcp-memory": "mcp_servers.memory.__main__",
    "--mcp-schedule": "mcp_servers.schedule.__main__",
    "--mcp-skills": "mcp_servers.skills.__main__",
}


def main() -> None:
    # LiteLLM would otherwise fetch its cost map from the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role == "--python":
        run_script(sys.argv[2:])
        return
    module = ROLES.get(role)
    if module is None:
        module = "desktop.app"
    else:
        del sys.argv[1]
    run = importlib.import_module(module).main
    sys.exit(run())


def run_script(argv: list[str]) -> None:
    """`atrium --python [-I -S -B -X opt ...] script [args]`: what the sandbox asks of a Python
    interpreter to start its child (a bundle has no `python`). Interpreter flags are accepted and
    ignored: the bundle's interpreter is already isolated from site-packages and the user's."""
    import runpy

    args = list(argv)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag == "-X" and args:
            args.pop(0)
    if not args:
        raise SystemExit("atrium --python: no script given")
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
