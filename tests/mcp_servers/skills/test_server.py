"""The skills server in memory: list, load, read a file, run a script in the sandbox."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_servers.sandbox.runner import SandboxSettings
from mcp_servers.skills import build_server
from mcp_servers.skills.catalog import default_roots
from tests.mcp_servers.skills.conftest import write_skill

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parents[3]


def _text(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []))


@pytest.fixture
def skills_root(workspace: Path) -> Path:
    root = workspace / ".agents" / "skills"
    folder = write_skill(root, "harbour-report", body="# Harbour report\nRead the tides first.\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "tides.py").write_text(
        "import sys\nprint('high tide at', sys.argv[1])\n", encoding="utf-8"
    )
    (folder / "scripts" / "spin.py").write_text("while True:\n    pass\n", encoding="utf-8")
    (folder / "scripts" / "escape.py").write_text(
        "open('/etc/atrium-skill-escape', 'w').write('x')\n", encoding="utf-8"
    )
    (folder / "references").mkdir()
    (folder / "references" / "ports.md").write_text("# Ports\nFalmouth\n", encoding="utf-8")
    write_skill(root, "broken", frontmatter="name: broken\n")
    return root


@pytest.fixture
async def client(workspace: Path, skills_root: Path, tmp_path: Path) -> AsyncIterator[Client]:
    del skills_root
    server = build_server(
        default_roots(workspace, None),
        sandbox_dir=tmp_path / "sandbox",
        limits=SandboxSettings(timeout_s=3.0),
    )
    async with Client(server, raise_exceptions=True) as connected:
        yield connected


async def test_list_shows_every_skill_with_its_problems(client: Client) -> None:
    result = await client.call_tool("list", {})

    skills = {s["name"]: s for s in (result.structured_content or {})["skills"]}
    assert skills["harbour-report"]["ok"] is True
    assert skills["harbour-report"]["resources"] == [
        "scripts/escape.py",
        "scripts/spin.py",
        "scripts/tides.py",
        "references/ports.md",
    ]
    assert skills["broken"]["ok"] is False
    assert "no description" in skills["broken"]["errors"][0]


async def test_load_returns_the_body_and_refuses_a_broken_or_unknown_skill(client: Client) -> None:
    loaded = await client.call_tool("load", {"name": "harbour-report"})
    assert _text(loaded) == "# Harbour report\nRead the tides first."

    broken = await client.call_tool("load", {"name": "broken"})
    assert broken.is_error and "cannot be used" in _text(broken)
    missing = await client.call_tool("load", {"name": "nope"})
    assert missing.is_error and "no skill named" in _text(missing)


async def test_read_file_reads_only_the_skills_own_files(client: Client) -> None:
    ok = await client.call_tool(
        "read_file", {"name": "harbour-report", "path": "references/ports.md"}
    )
    assert "Falmouth" in _text(ok)

    escape = await client.call_tool("read_file", {"name": "harbour-report", "path": "../../x"})
    assert escape.is_error and "has no file" in _text(escape)


async def test_a_script_runs_in_the_sandbox_with_its_arguments(client: Client) -> None:
    result = await client.call_tool(
        "run_script", {"name": "harbour-report", "script": "tides.py", "args": ["Falmouth"]}
    )
    assert not result.is_error, _text(result)
    assert "high tide at Falmouth" in _text(result)


async def test_a_looping_script_is_stopped_by_the_sandbox_timeout(client: Client) -> None:
    with anyio.fail_after(30):
        result = await client.call_tool(
            "run_script", {"name": "harbour-report", "script": "spin.py"}
        )
    assert result.is_error and "timed out" in _text(result)


async def test_a_script_cannot_write_outside_its_run_folder(client: Client) -> None:
    result = await client.call_tool("run_script", {"name": "harbour-report", "script": "escape.py"})
    assert result.is_error
    assert not Path("/etc/atrium-skill-escape").exists()


async def test_a_skill_added_while_the_server_runs_is_listed(
    client: Client, skills_root: Path
) -> None:
    write_skill(skills_root, "tide-table", "Use for tide tables.")

    result = await client.call_tool("list", {})

    assert "tide-table" in {s["name"] for s in (result.structured_content or {})["skills"]}


@pytest.mark.slow
async def test_the_skills_server_runs_standalone_over_stdio(
    workspace: Path, skills_root: Path
) -> None:
    del skills_root
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcp_servers.skills",
            "--workspace",
            str(workspace),
            "--account-dir",
            str(workspace / "none"),
        ],
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
        cwd=str(REPO),
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            loaded = await client.call_tool("load", {"name": "harbour-report"})
    assert names == ["list", "load", "read_file", "run_script"]
    assert "Read the tides first." in _text(loaded)
