"""Real Claude Code (`claude -p`) against the Anthropic dialect, fully offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes_selftest.cli_runner import CliRun, run_cli
from tests.setup.agent_clis import AgentClis, claude_env

pytestmark = pytest.mark.slow

MCP_SERVER = Path(__file__).with_name("mcp_add_server.py")


def _claude(
    clis: AgentClis, server: ScriptedModelServer, tmp_path: Path, prompt: str, *flags: str
) -> CliRun:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = claude_env(server.url, tmp_path / "home")
    argv = [clis.claude, "-p", prompt, "--output-format", "stream-json", "--verbose", *flags]
    return run_cli(argv, env, work)


def _tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    last = request.body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b["type"] == "tool_result"]


def test_claude_prints_the_scripted_text(
    agent_clis: AgentClis, scripted_anthropic: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_anthropic.push(Reply.text("hello from the script"))
    run = _claude(agent_clis, scripted_anthropic, tmp_path, "say hello")
    assert run.returncode == 0, run.stderr
    assert run.of_type("system")[0]["subtype"] == "init"
    result = run.of_type("result")[-1]
    assert (result["is_error"], result["result"]) == (False, "hello from the script")
    assert scripted_anthropic.paths == ["POST /v1/messages"]
    request = scripted_anthropic.generation_requests[0]
    assert request.query == {"beta": ["true"]} and request.stream
    assert request.headers["x-api-key"].startswith("sk-scripted")


def test_claude_runs_bash_and_returns_its_output(
    agent_clis: AgentClis, scripted_anthropic: ScriptedModelServer, tmp_path: Path
) -> None:
    command = {"command": "echo from-bash > out.txt && cat out.txt", "description": "demo"}
    scripted_anthropic.push(
        Reply.tool_call("Bash", command, id="toolu_bash1"), Reply.text("ran it")
    )
    run = _claude(
        agent_clis, scripted_anthropic, tmp_path, "run a command", "--allowedTools", "Bash"
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "work" / "out.txt").read_text() == "from-bash\n"
    second = scripted_anthropic.generation_requests[1]
    [tool_result] = _tool_results(second)
    assert tool_result["tool_use_id"] == "toolu_bash1"
    assert "from-bash" in json.dumps(tool_result["content"])
    assert run.of_type("result")[-1]["num_turns"] == 2


def test_claude_writes_a_file_with_the_write_tool(
    agent_clis: AgentClis, scripted_anthropic: ScriptedModelServer, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "note.md"
    scripted_anthropic.push(
        Reply.tool_call("Write", {"file_path": str(target), "content": "# Note\n"}),
        Reply.text("written"),
    )
    run = _claude(
        agent_clis, scripted_anthropic, tmp_path, "write a note", "--permission-mode", "acceptEdits"
    )
    assert run.returncode == 0, run.stderr
    assert target.read_text() == "# Note\n"
    assert run.of_type("result")[-1]["result"] == "written"


def test_claude_calls_an_mcp_tool(
    agent_clis: AgentClis, scripted_anthropic: ScriptedModelServer, tmp_path: Path
) -> None:
    config = {
        "mcpServers": {
            "own": {"type": "stdio", "command": sys.executable, "args": [str(MCP_SERVER)]}
        }
    }
    config_path = tmp_path / "mcp.json"
    config_path.write_text(json.dumps(config))
    scripted_anthropic.push(Reply.tool_call("mcp__own__add", {"a": 2, "b": 3}), Reply.text("five"))
    run = _claude(
        agent_clis,
        scripted_anthropic,
        tmp_path,
        "add",
        "--mcp-config",
        str(config_path),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__own__add",
    )
    assert run.returncode == 0, run.stderr
    assert run.of_type("system")[0]["mcp_servers"] == [{"name": "own", "status": "connected"}]
    offered = [t["name"] for t in scripted_anthropic.generation_requests[0].body["tools"]]
    assert "mcp__own__add" in offered
    [tool_result] = _tool_results(scripted_anthropic.generation_requests[1])
    assert "5" in json.dumps(tool_result["content"])


def test_claude_reports_a_scripted_api_error(
    agent_clis: AgentClis, scripted_anthropic: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_anthropic.push(Reply.error(400))
    run = _claude(agent_clis, scripted_anthropic, tmp_path, "fail please")
    result = run.of_type("result")[-1]
    assert result["is_error"] is True
    assert result["api_error_status"] == 400
    assert run.returncode != 0
    assert len(scripted_anthropic.generation_requests) == 1
