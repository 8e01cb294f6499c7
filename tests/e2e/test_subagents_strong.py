"""Strong-agent subagents through the real sidecar: the task runs as an `agent_run` call on the
built-in agents MCP server, its events arrive nested under the task, and the CLI's permission
request reaches the author as a live form interrupt naming the task. The task runs in the
background of its thread: the turn that delegates it ends at once, its questions are live
interrupts of the plan's background run, and its result is announced into the thread when the
plan ends, taken by a turn of the main agent (a scripted model on 127.0.0.1).

One test replays a recorded Claude Code transcript with the fake CLI; one drives the real,
pinned Claude Code CLI against a scripted Anthropic Messages server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_sidecar_model import model_env
from tests.e2e.test_subagents import _handed_off, _is_announcement, _live, _plan, _plan_ends
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.mcp_servers.agents.helpers import FAKE_CLI, shared_transcript
from tests.peers import peer_unavailable
from tests.setup.agent_clis import (
    INSTALL_TIMEOUT_S,
    AgentCliUnavailable,
    claude_env,
    install_agent_clis,
    node_bin_dir,
)

pytestmark = pytest.mark.anyio
RECORDED_SESSION = "25f505f3-79a7-4119-8ffa-23ce6efc7560"


def _fake_claude(tmp_path: Path) -> Path:
    script = tmp_path / "claude"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
    script.chmod(0o755)
    return script


TOLD = "The team's work is done."
"""What the main agent says when a plan's announcement comes in."""


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    """The main agent's model: it answers the plan's announcement."""
    with openai_chat_server() as server:
        server.fallback = Reply.text(answer_text(TOLD))
        yield server


async def _delegate(agent: Sidecar, text: str) -> str:
    """Delegate on a new thread; returns its id once the delegating turn handed the plan off
    to the background and ended."""
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})
    turn = await agent.run_to_end(run["run_id"], within=90)
    assert event_types(turn)[-1] == "run_finished"
    _handed_off(turn, (await _plan(agent, thread["id"]))["id"])
    return thread["id"]


async def _told(agent: Sidecar, model: ScriptedModelServer, thread_id: str) -> None:
    """The main agent took the announcement once and told the author."""
    assert sum(_is_announcement(r) for r in model.generation_requests) == 1
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert got["messages"][-1]["content"] == TOLD


async def test_a_claude_code_task_replays_a_recorded_run_and_asks_the_author_through_a_form(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    env = {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(shared_transcript("claude_1.jsonl")),
        "FAKE_CLI_LOG": str(tmp_path / "fake.log"),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread_id = await _delegate(agent, "/delegate claude Write hello.txt saying hi")
        # Dispatching a writing strong agent asks first (the review gate's delegation question).
        await agent.wait_for(lambda evs: "task" in _live(evs), within=90)
        [plan_run] = agent.background_runs(thread_id)
        delegation = _live(agent.events)["task"]
        assert (delegation.kind, delegation.tool) == ("approval", "agent_run")  # type: ignore[union-attr]
        allow: dict[str, Any] = {"decision": "allow_once"}
        answered = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": delegation.id, "value": allow}
        )
        assert answered["run_id"] == plan_run
        await agent.wait_for(lambda evs: _live(evs)["task"].kind == "form", within=90)
        form = _live(agent.events)["task"]
        assert (form.kind, form.server) == ("form", "agents")
        value: dict[str, Any] = {"action": "accept", "content": {}}
        answered = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": form.id, "value": value}
        )
        assert answered["run_id"] == plan_run  # answered in place: the plan's run goes on
        events, report = await _plan_ends(agent, thread_id, "completed", within=90)
        await _told(agent, model, thread_id)
    finally:
        await agent.kill()
    nested = [e.event for e in events if e.event.type == "subagent_event"]
    assert any(n.event["type"] == "tool_progress" for n in nested)  # type: ignore[union-attr]
    assert "  Findings: Done. Created `hello.txt` with content `hi`." in report.splitlines()
    agent2 = await Sidecar.start(sidecar_data, workspace)
    try:
        await agent2.call("initialize", {"client_name": "tests"})
        plan = await _plan(agent2, thread_id)
        [task] = plan["tasks"]
        ref = {"thread_id": thread_id, "plan_id": plan["id"], "task_id": task["id"]}
        envelopes = (await agent2.call("task/envelopes", ref))["envelopes"]
    finally:
        await agent2.kill()
    assert (task["status"], task["session_ref"]) == ("succeeded", RECORDED_SESSION)
    # The strong agent's raw and normalized traces are linked from its result.
    [final] = [e for e in envelopes if e["kind"] == "final"]
    traces = final["payload"]["traces"]
    assert set(traces) == {"raw", "normalized"}
    assert all(Path(path).is_file() for path in traces.values())
    # The replayed CLI wrote nothing into its isolated copy, and the result says so.
    assert task["summary"] == (
        "Done. Created `hello.txt` with content `hi`.\n\nThe agent changed no files."
    )


@pytest.fixture
def anthropic() -> Iterator[ScriptedModelServer]:
    with anthropic_server() as server:
        yield server


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 300)
async def test_a_task_for_the_real_claude_code_cli_runs_against_the_scripted_model(
    sidecar_data: Path,
    workspace: Path,
    tmp_path: Path,
    anthropic: ScriptedModelServer,
    model: ScriptedModelServer,
):
    try:
        clis = install_agent_clis()
    except AgentCliUnavailable:
        if shutil.which("npm") is None or node_bin_dir() is None:
            peer_unavailable("npm/node not on PATH: cannot install the pinned agent CLIs")
        raise

    def respond(request: RecordedRequest) -> Reply:
        # The CLI also asks the model for a session title; that is not the task's answer.
        if "Write the title" in json.dumps(request.body.get("messages", [])):
            return Reply.text("Story outline")
        return Reply.text("The outline has three acts.")

    anthropic.push(respond, respond)
    env = {
        **claude_env(anthropic.url, tmp_path / "home"),
        "ATRIUM_CLAUDE_BIN": str(clis.claude),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread_id = await _delegate(agent, "/delegate claude Outline the story")
        await agent.wait_for(lambda evs: "task" in _live(evs), within=90)
        allow = {"decision": "allow_once"}
        delegation_id = _live(agent.events)["task"].id
        answered = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": delegation_id, "value": allow}
        )
        assert [answered["run_id"]] == agent.background_runs(thread_id)
        _events, report = await _plan_ends(agent, thread_id, "completed", within=180)
        await _told(agent, model, thread_id)
        [task] = (await _plan(agent, thread_id))["tasks"]
    finally:
        await agent.kill()
    assert "  Findings: The outline has three acts." in report.splitlines()
    assert task["status"] == "succeeded"
    assert task["summary"].startswith("The outline has three acts.")
    assert task["session_ref"] and task["tokens_in"] > 0
    assert anthropic.generation_requests  # the CLI asked the scripted model, nobody else
