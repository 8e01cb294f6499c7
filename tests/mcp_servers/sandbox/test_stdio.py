"""One real stdio round trip: the sandbox server as a subprocess."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_servers.sandbox import RunResult

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_sandbox_server_runs_standalone_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.sandbox", "--workdir", str(tmp_path), "--timeout", "10"],
        # stdio_client passes only a small safe environment; the child must find the package.
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(REPO),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("run_python", {"code": "print(sum(range(10)))"})
    assert names == ["run_python"]
    run = RunResult.model_validate(result.structured_content)
    assert (run.exit_code, run.stdout) == (0, "45\n")
    assert (tmp_path / run.run_dir / "main.py").is_file()
