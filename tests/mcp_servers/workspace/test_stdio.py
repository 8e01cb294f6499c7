"""One real stdio round trip: the workspace server as a subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_servers.workspace.models import ReadResult

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_workspace_server_runs_standalone_over_stdio(root: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.workspace", "--root", str(root)],
        # stdio_client passes only a small safe environment; the child must find the package.
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(REPO),
    )
    with anyio.fail_after(30):
        async with Client(params) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert names == ["edit", "list", "preview", "read", "search", "write"]
            result = await client.call_tool("read", {"path": "sub/a.txt", "limit": 1})
    assert ReadResult.model_validate(result.structured_content).content == "alpha\n"
