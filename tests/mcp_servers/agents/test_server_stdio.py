"""The agents server as a real subprocess over stdio, with the official Python client."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

from mcp_servers.agents.providers import ProvidersReport
from mcp_servers.agents.runs import RunStatus
from tests.mcp_servers.agents.helpers import FAKE_CLI, fake_log, stdin_messages, wait_pid_gone
from tests.mcp_servers.agents.server_support import (
    Elicitations,
    ProgressLog,
    group_alive,
    permission_transcript,
    write_transcript,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


def _executable(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _params(tmp_path: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcp_servers.agents",
            "--trace-dir",
            str(tmp_path / "traces"),
            "--heartbeat",
            "0.2",
        ],
        # stdio_client passes only a small safe environment: say everything the server needs.
        env={"PYTHONPATH": str(REPO), **env},
        cwd=str(REPO),
    )


async def test_the_server_lists_its_tools_and_providers_over_stdio(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _executable(bin_dir / "claude", "echo '2.1.197 (Claude Code)'")
    params = _params(tmp_path, {"PATH": f"{bin_dir}:/usr/bin:/bin"})
    with anyio.fail_after(60):
        async with Client(params) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            result = await client.call_tool("agent_providers", {})

    assert names == [
        "agent_cancel",
        "agent_message",
        "agent_providers",
        "agent_resume",
        "agent_run",
        "agent_status",
    ]
    report = ProvidersReport.model_validate(result.structured_content)
    claude = next(p for p in report.providers if p.provider == "claude")
    assert (claude.installed, claude.version) == (True, "2.1.197")


async def test_a_run_over_stdio_streams_progress_elicits_and_stops_on_cancel(
    tmp_path: Path,
) -> None:
    transcript = write_transcript(tmp_path / "run.jsonl", permission_transcript())
    fake = _executable(tmp_path / "claude", f'exec "{sys.executable}" "{FAKE_CLI}" "$@"')
    env = {
        "PATH": "/usr/bin:/bin",
        "ATRIUM_CLAUDE_BIN": str(fake),
        "FAKE_CLI_TRANSCRIPT": str(transcript),
        "FAKE_CLI_LOG": str(tmp_path / "fake.log"),
        "FAKE_CLI_HANG_AFTER": "4",  # after the permission is answered and the tool ran
    }
    elicit = Elicitations(ElicitResult(action="accept", content={}))
    progress = ProgressLog()
    arguments = {
        "provider": "claude",
        "instruction": "write",
        "working_dir": str(tmp_path),
        "run_id": "stdio-1",
    }
    with anyio.fail_after(60):
        async with Client(_params(tmp_path, env), elicitation_callback=elicit) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool("agent_run", arguments, progress_callback=progress)
                )
                await progress.heartbeat_after("tool_result")
                group.cancel_scope.cancel()
            [argv] = fake_log(tmp_path, "argv")
            assert await wait_pid_gone(argv["pid"], 20)
            status = await client.call_tool("agent_cancel", {"run_id": "stdio-1"})

    assert len(elicit.asked) == 1
    responses = [m["response"] for m in stdin_messages(tmp_path) if m["type"] == "control_response"]
    assert responses[0]["response"]["behavior"] == "allow"
    interrupts = [m for m in stdin_messages(tmp_path) if m["type"] == "control_request"]
    assert [m["request"] for m in interrupts] == [{"subtype": "interrupt"}]
    kinds = [m["type"] for m in progress.messages]
    assert {"run_started", "session_started", "tool_call", "tool_result"} <= set(kinds)
    assert not group_alive(argv["pid"])
    view = RunStatus.model_validate(status.structured_content)
    assert view.result is not None and view.result.status == "interrupted"
    traces = json.loads((tmp_path / "traces" / "stdio-1.result.json").read_text())
    assert traces["status"] == "interrupted"
