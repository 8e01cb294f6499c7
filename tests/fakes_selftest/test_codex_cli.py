"""Real Codex (`codex exec --json`) against the Responses dialect, fully offline."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes_selftest.cli_runner import CliRun, run_cli
from tests.setup.agent_clis import AgentClis, codex_env

pytestmark = pytest.mark.slow

MCP_SERVER = Path(__file__).with_name("mcp_add_server.py")


def _codex(
    clis: AgentClis, server: ScriptedModelServer, tmp_path: Path, prompt: str, **env_kw: Any
) -> CliRun:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = codex_env(server.url, tmp_path / "home", **env_kw)
    argv = [clis.codex, "exec", "--json", "--skip-git-repo-check", "-C", work, prompt]
    return run_cli(argv, env, work)


def _items(run: CliRun, kind: str) -> list[dict[str, Any]]:
    return [e["item"] for e in run.of_type("item.completed") if e["item"]["type"] == kind]


def test_codex_prints_the_scripted_agent_message(
    agent_clis: AgentClis, scripted_responses: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_responses.push(Reply.text("hello from the script"))
    run = _codex(agent_clis, scripted_responses, tmp_path, "say hello")
    assert run.returncode == 0, run.stderr
    assert [m["text"] for m in _items(run, "agent_message")] == ["hello from the script"]
    # Only the unknown-model notice; an "unrecognized configuration" item means config drift.
    assert all("Model metadata" in e["message"] for e in _items(run, "error"))
    assert run.of_type("turn.completed")
    assert scripted_responses.paths == ["POST /v1/responses"]
    request = scripted_responses.generation_requests[0]
    assert request.stream and request.body["model"] == "scripted"
    assert request.headers["authorization"] == "Bearer sk-scripted-not-a-real-key"


def test_codex_executes_a_command_and_sends_its_output_back(
    agent_clis: AgentClis, scripted_responses: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_responses.push(
        Reply.tool_call("exec_command", {"cmd": "echo from-exec > out.txt; cat out.txt"}, id="c1"),
        Reply.text("ran it"),
    )
    run = _codex(agent_clis, scripted_responses, tmp_path, "run a command")
    assert run.returncode == 0, run.stderr
    [command] = _items(run, "command_execution")
    assert (command["status"], command["exit_code"]) == ("completed", 0)
    assert command["aggregated_output"] == "from-exec\n"
    assert (tmp_path / "work" / "out.txt").read_text() == "from-exec\n"
    second = scripted_responses.generation_requests[1].body["input"]
    outputs = [i for i in second if i.get("type") == "function_call_output"]
    assert outputs[-1]["call_id"] == "c1"
    assert "from-exec" in str(outputs[-1]["output"])


def test_codex_calls_an_mcp_tool_through_its_namespace(
    agent_clis: AgentClis, scripted_responses: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_responses.push(
        Reply.tool_call("add", {"a": 2, "b": 3}, namespace="mcp__own"), Reply.text("five")
    )
    server = {
        "command": sys.executable,
        "args": [str(MCP_SERVER)],
        "default_tools_approval_mode": "approve",
        "required": True,  # else the first request may go out before the server's tools load
    }
    run = _codex(agent_clis, scripted_responses, tmp_path, "add", mcp_servers={"own": server})
    assert run.returncode == 0, run.stderr
    offered = scripted_responses.generation_requests[0].body["tools"]
    [namespace] = [t for t in offered if t.get("name") == "mcp__own"]
    assert namespace["type"] == "namespace"
    assert [t["name"] for t in namespace["tools"]] == ["add"]
    [call] = _items(run, "mcp_tool_call")
    assert (call["server"], call["tool"], call["status"]) == ("own", "add", "completed")
    assert call["result"]["structured_content"] == {"result": 5}


def test_codex_fails_the_turn_on_a_scripted_error(
    agent_clis: AgentClis, scripted_responses: ScriptedModelServer, tmp_path: Path
) -> None:
    scripted_responses.push(Reply.error(400))
    run = _codex(agent_clis, scripted_responses, tmp_path, "fail please")
    assert run.returncode != 0
    assert run.of_type("turn.failed")
    assert len(scripted_responses.generation_requests) == 1
