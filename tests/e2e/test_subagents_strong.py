"""Strong-agent subagents through the real sidecar: the task runs as an `agent_run` call on the
built-in agents MCP server, its events arrive nested under the task, and the CLI's permission
request reaches the author as a live form interrupt naming the task. The task runs in the
background of its thread: the turn that delegates it ends at once, its questions are live
interrupts of the plan's background run, and its result is announced into the thread when the
plan ends, taken by a turn of the main agent (a scripted model on 127.0.0.1).

One test replays a recorded Claude Code transcript with the fake CLI; one drives the real,
pinned Claude Code CLI against a scripted Anthropic Messages server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.plans.estimate import TYPICAL_TOKENS
from sidecar.protocol import PlanApprovalInterrupt
from tests.e2e.harness import RpcFailure, Sidecar, event_types
from tests.e2e.test_sidecar_model import model_env
from tests.e2e.test_subagents import (
    _handed_off,
    _is_announcement,
    _last_user,
    _live,
    _plan,
    _plan_ends,
)
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


def _cli_runs(log: Path) -> list[dict[str, Any]]:
    """The fake CLI's runs (not its `--version` answers), in start order."""
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in logged if e.get("kind") == "argv" and e["argv"] != ["--version"]]


def _usage_transcript(path: Path) -> Path:
    """A Claude Code stream that reports its usage per model message, then goes on working
    (the fake CLI hangs after it: only a stop ends it)."""
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": RECORDED_SESSION, "tools": []},
    ]
    for n, (tokens_in, tokens_out) in enumerate([(10, 5), (40, 20), (80, 30)]):
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"Working, step {n}."}],
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                },
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_a_strong_agent_over_its_plans_budget_mid_stream_is_stopped_and_the_author_asked(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    """The CLI streams its usage; at 100% of the plan's budget the run is stopped there and
    then (it would never end by itself) and the author is asked to raise the budget or stop."""
    log = tmp_path / "fake.log"
    env = {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(_usage_transcript(tmp_path / "usage.jsonl")),
        "FAKE_CLI_HANG_AFTER": "3",
        "FAKE_CLI_LOG": str(log),
        **model_env(model),
    }
    task = {"id": "a", "title": "Draft", "objective": "Draft the chapter.", "profile": "claude"}
    plan = {"goal": "frugal", "budget_tokens": 60, "tasks": [task]}
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread = await agent.call("thread/create", {})
        thread_id = thread["id"]
        run = await agent.call(
            "run/start", {"thread_id": thread_id, "text": "/plan " + json.dumps(plan)}
        )
        [approval] = [
            e.event.interrupt  # type: ignore[union-attr]
            for e in await agent.run_to_end(run["run_id"])
            if e.event.type == "interrupt"
        ]
        approve = {"decision": "approve"}
        resumed = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": approval.id, "value": approve}
        )
        await agent.run_to_end(resumed["run_id"])

        def budget_question(_evs: object) -> bool:
            asked = _live(agent.events).get("a")
            return asked is not None and asked.title == "[Draft] Plan budget spent"  # type: ignore[union-attr]

        await agent.wait_for(budget_question, within=90)
        question = _live(agent.events)["a"]
        assert question.choices == ("Raise the budget to 150 tokens", "Stop the plan")
        waiting = await _plan(agent, thread_id)
        [stopped] = waiting["tasks"]
        # Charged on what the CLI streamed: the second message's totals crossed the budget.
        assert waiting["spent_tokens"] >= 75 and waiting["budget_warned"] is True
        assert stopped["tokens_in"] + stopped["tokens_out"] >= 75
        assert stopped["session_ref"] == RECORDED_SESSION
        stop = {"answer": "Stop the plan"}
        await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": question.id, "value": stop}
        )
        _events, report = await _plan_ends(agent, thread_id, "aborted", within=90)
        [ended] = (await _plan(agent, thread_id))["tasks"]
    finally:
        await agent.kill()
    assert ended["status"] == "cancelled"
    assert ended["error"].startswith("stopped: the plan's token budget is spent (")
    assert "aborted" in report
    # The CLI ran once, and never got to the end of its stream (it hung after its usage).
    assert len(_cli_runs(log)) == 1


def _claude_transcript(path: Path, *, ends: bool) -> Path:
    """A Claude Code stream for `RECORDED_SESSION`: its start and a message; with `ends`, its
    successful result too (else the fake CLI is told to hang after the message)."""
    message = {
        "id": "msg_resumed" if ends else "msg_started",
        "role": "assistant",
        "content": [{"type": "text", "text": "Chapter drafted." if ends else "Drafting."}],
    }
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": RECORDED_SESSION, "tools": []},
        {"type": "assistant", "message": message, "session_id": RECORDED_SESSION},
    ]
    if ends:
        lines.append(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": "Chapter drafted.",
                "session_id": RECORDED_SESSION,
                "num_turns": 1,
                "usage": {"input_tokens": 20, "output_tokens": 5},
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _session_recorded(events: list[Any]) -> bool:
    return any(
        e.event.type == "task_update" and e.event.task.session_ref == RECORDED_SESSION
        for e in events
    )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_strong_task_a_kill_left_running_goes_on_in_its_own_session_by_itself(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    """SIGKILL while Claude Code works on a task; at the next start the plan is taken up with
    no author action: the CLI resumes its own session (`--resume`), the earlier CLI is gone
    before it starts, and the report says what was resumed."""
    log = tmp_path / "fake.log"
    common = {"ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)), "FAKE_CLI_LOG": str(log)}
    first = {
        **common,
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "a.jsonl", ends=False)),
        "FAKE_CLI_HANG_AFTER": "2",
        **model_env(model),
    }
    task = {"id": "a", "title": "Draft", "objective": "Draft the chapter.", "profile": "claude"}
    agent = await Sidecar.start(sidecar_data, workspace, **first)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread_id = (await agent.call("thread/create", {}))["id"]
        plan = {"goal": "draft", "tasks": [task]}
        run = await agent.call(
            "run/start", {"thread_id": thread_id, "text": "/plan " + json.dumps(plan)}
        )
        [approval] = [
            e.event.interrupt  # type: ignore[union-attr]
            for e in await agent.run_to_end(run["run_id"])
            if e.event.type == "interrupt"
        ]
        approve = {"decision": "approve"}
        resumed = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": approval.id, "value": approve}
        )
        await agent.run_to_end(resumed["run_id"])
        # The CLI announced its session: the task keeps it before the run ends.
        await agent.wait_for(_session_recorded, within=90)
    finally:
        await agent.kill()
    [started] = _cli_runs(log)
    second = {
        **common,
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "b.jsonl", ends=True)),
        **model_env(model),
    }
    again = await Sidecar.start(sidecar_data, workspace, **second)
    try:
        await again.call("initialize", {"client_name": "tests"})
        _events, report = await _plan_ends(again, thread_id, "completed", within=90)
        [done] = (await _plan(again, thread_id))["tasks"]
        plan_id = (await _plan(again, thread_id))["id"]
        ref = {"thread_id": thread_id, "plan_id": plan_id, "task_id": "a"}
        envelopes = (await again.call("task/envelopes", ref))["envelopes"]
    finally:
        await again.kill()
    [first_run, taken_up] = _cli_runs(log)
    assert first_run["pid"] == started["pid"]
    assert taken_up["argv"][taken_up["argv"].index("--resume") + 1] == RECORDED_SESSION
    assert not _pid_alive(started["pid"])  # the stopped CLI did not outlive its sidecar
    assert (done["status"], done["summary"]) == (
        "succeeded",
        "Chapter drafted.\n\nThe agent changed no files.",
    )
    how = f"its Claude Code session {RECORDED_SESSION} goes on where it stopped"
    assert f"  Taken up again (after a restart or a pause): {how}" in report.splitlines()
    [observation] = [e for e in envelopes if e["kind"] == "observation"]
    assert observation["payload"] == {"resumed": how}


async def _dies(pid: int) -> None:
    """Wait (bounded) until the process is gone: the agents server stops a cancelled run's CLI
    by itself, after the call's cancellation reached it."""
    async with asyncio.timeout(30):
        while _pid_alive(pid):  # noqa: ASYNC110 - nothing signals it
            await asyncio.sleep(0.05)


def _working_claude_env(tmp_path: Path, log: Path, model: ScriptedModelServer) -> dict[str, str]:
    """The fake Claude Code that announces its session, says a line and works on (it hangs
    until stopped), logging to `log`; the main agent's model is `model`."""
    return {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "a.jsonl", ends=False)),
        "FAKE_CLI_HANG_AFTER": "2",
        "FAKE_CLI_LOG": str(log),
        **model_env(model),
    }


async def _refused(agent: Sidecar, method: str, params: dict[str, Any]) -> int:
    """The error code the sidecar answers `method` with (it must refuse)."""
    with pytest.raises(RpcFailure) as refused:
        await agent.call(method, params)
    return refused.value.code


async def _plan_running_claude(agent: Sidecar, goal: str) -> tuple[str, str]:
    """Approve a one-task plan for Claude Code on a new thread; returns (thread id, plan id)
    once the CLI announced its session."""
    await agent.call("initialize", {"client_name": "tests"})
    thread_id = (await agent.call("thread/create", {}))["id"]
    task = {"id": "a", "title": "Draft", "objective": "Draft the chapter.", "profile": "claude"}
    plan = {"goal": goal, "tasks": [task]}
    run = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/plan " + json.dumps(plan)}
    )
    [approval] = [
        e.event.interrupt  # type: ignore[union-attr]
        for e in await agent.run_to_end(run["run_id"])
        if e.event.type == "interrupt"
    ]
    # Before approval the author sees what it will likely use (no earlier tasks here).
    assert isinstance(approval, PlanApprovalInterrupt)
    assert approval.estimate_tokens == TYPICAL_TOKENS["strong"]
    assert (approval.estimate or "").startswith("Estimated: about 80,000 tokens")
    approve = {"decision": "approve"}
    resumed = await agent.call(
        "run/resume", {"thread_id": thread_id, "interrupt_id": approval.id, "value": approve}
    )
    await agent.run_to_end(resumed["run_id"])
    await agent.wait_for(_session_recorded, within=90)
    return thread_id, (await _plan(agent, thread_id))["id"]


async def test_a_paused_plan_stops_its_agent_stays_paused_across_a_restart_and_resumes_its_session(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    log = tmp_path / "fake.log"
    common = {"ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)), "FAKE_CLI_LOG": str(log)}
    first = {
        **common,
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "a.jsonl", ends=False)),
        "FAKE_CLI_HANG_AFTER": "2",
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **first)
    try:
        thread_id, plan_id = await _plan_running_claude(agent, "pausable")
        [plan_run] = agent.background_runs(thread_id)
        ref = {"thread_id": thread_id, "plan_id": plan_id}
        paused = await agent.call("plan/pause", ref)
        # The plan's run ended as cancelled, and its agent's CLI with it.
        assert event_types(agent.run_events(plan_run))[-1] == "run_cancelled"
        [started] = _cli_runs(log)
        await _dies(started["pid"])
        again = await _refused(agent, "plan/pause", ref)
        listed = await agent.call("plan/list", {"status": "paused"})
    finally:
        await agent.kill()
    assert paused["plan"]["status"] == "paused"
    [task] = paused["plan"]["tasks"]
    assert (task["status"], task["activity"]) == ("running", "paused by the author")
    assert again == -32045  # not running: it is paused
    assert [p["id"] for p in listed["plans"]] == [plan_id]
    second = {
        **common,
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "b.jsonl", ends=True)),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **second)
    try:
        await agent.call("initialize", {"client_name": "tests"})
        still = await _plan(agent, thread_id)  # a paused plan is not taken up at start-up
        resumed = await agent.call("plan/resume", ref)
        _events, report = await _plan_ends(agent, thread_id, "completed", within=90)
        [done] = (await _plan(agent, thread_id))["tasks"]
    finally:
        await agent.kill()
    assert still["status"] == "paused"
    assert resumed["plan"]["status"] == "running" and resumed["run_id"]
    assert done["status"] == "succeeded"
    [_, taken_up] = _cli_runs(log)  # nothing ran between the pause and the resume
    assert taken_up["argv"][taken_up["argv"].index("--resume") + 1] == RECORDED_SESSION
    how = f"its Claude Code session {RECORDED_SESSION} goes on where it stopped"
    assert f"  Taken up again (after a restart or a pause): {how}" in report.splitlines()


async def test_cancelling_a_paused_plan_ends_it_as_aborted_and_announces_it(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    env = {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "a.jsonl", ends=False)),
        "FAKE_CLI_HANG_AFTER": "2",
        "FAKE_CLI_LOG": str(tmp_path / "fake.log"),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id, plan_id = await _plan_running_claude(agent, "cancellable")
        ref = {"thread_id": thread_id, "plan_id": plan_id}
        await agent.call("plan/pause", ref)
        cancelled = await agent.call("plan/cancel", ref)
        _events, report = await _plan_ends(agent, thread_id, "aborted", skip=1, within=90)
        ended = await _plan(agent, thread_id)
        late = await _refused(agent, "plan/cancel", ref)
        resume_ended = await _refused(agent, "plan/resume", ref)
        unknown = await _refused(agent, "plan/pause", {**ref, "plan_id": "nope"})
    finally:
        await agent.kill()
    assert cancelled["run_id"]  # taken up only to end its open task
    assert ended["status"] == "aborted"
    [task] = ended["tasks"]
    assert task["status"] == "cancelled"
    assert f"Plan {plan_id}: aborted." in report
    assert (late, resume_ended, unknown) == (-32045, -32046, -32044)


async def test_the_main_agent_messages_a_working_claude_code_task_which_takes_it_as_its_next_turn(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    """The author tells the main agent to pass a word on; it calls atrium__task_message, the
    message reaches Claude Code's stdin while it works, and its run goes on to that turn."""
    log = tmp_path / "fake.log"
    ids: dict[str, str] = {}
    note = "Use British spelling."

    def respond(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        if "Tell the drafter" in _last_user(request) and messages[-1]["role"] != "tool":
            arguments = {"plan_id": ids["plan"], "task_id": "a", "text": note}
            return Reply.tool_call("atrium__task_message", arguments)
        return Reply.text(answer_text(TOLD))

    model.fallback = respond
    env = {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "t.jsonl", ends=True)),
        "FAKE_CLI_HANG_AFTER": "2",
        "FAKE_CLI_RELEASE_AFTER_MESSAGES": "1",
        "FAKE_CLI_LOG": str(log),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id, ids["plan"] = await _plan_running_claude(agent, "messaged")
        run = await agent.call(
            "run/start", {"thread_id": thread_id, "text": "Tell the drafter about spelling."}
        )
        turn = await agent.run_to_end(run["run_id"], within=90)
        _events, report = await _plan_ends(agent, thread_id, "completed", within=90)
        ref = {"thread_id": thread_id, "plan_id": ids["plan"], "task_id": "a"}
        envelopes = (await agent.call("task/envelopes", ref))["envelopes"]
    finally:
        await agent.kill()
    [result] = [e.event for e in turn if e.event.type == "tool_result"]
    assert "takes the message as its next turn" in result.content  # type: ignore[union-attr]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    written = [e["line"] for e in logged if e.get("kind") == "stdin"]
    assert any(note in json.dumps(line) for line in written)
    [message] = [e for e in envelopes if e["kind"] == "message"]
    assert message["payload"]["text"] == note and message["acked_at"] is not None
    assert "[succeeded] a (Draft)" in report


def _revising(model: ScriptedModelServer, ids: dict[str, str]) -> None:
    """The main agent: the author's "Change of plan" makes it revise the running plan (its
    task goes to a general helper instead); a subagent's task is answered; the rest is told."""

    def respond(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        users = [str(m["content"]) for m in messages if m["role"] == "user"]
        if users and "Task: " in users[0]:
            return Reply.text(answer_text("Outline done."))
        if "Change of plan" in _last_user(request) and messages[-1]["role"] != "tool":
            task = {"id": "b", "title": "Outline", "objective": "Outline it.", "profile": "general"}
            revised = {"goal": "outline instead", "plan_id": ids["plan"], "tasks": [task]}
            return Reply.tool_call("atrium__plan", revised)
        return Reply.text(answer_text(TOLD))

    model.fallback = respond


async def _revision_asked(agent: Sidecar, thread_id: str) -> tuple[str, Any]:
    """The author's new instruction about the running plan: the turn stops at the revision's
    approval. Returns the turn's run id and the approval."""
    run = await agent.call("run/start", {"thread_id": thread_id, "text": "Change of plan."})
    turn = await agent.run_to_end(run["run_id"], within=90)
    [approval] = [e.event.interrupt for e in turn if e.event.type == "interrupt"]  # type: ignore[union-attr]
    return run["run_id"], approval


async def test_an_authors_new_instruction_about_a_running_plan_proposes_a_revision(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    """While the author decides, the plan's work is stopped (its CLI gone); the approved
    revision replaces the open task, keeps it on record, and runs to the end."""
    log = tmp_path / "fake.log"
    ids: dict[str, str] = {}
    _revising(model, ids)
    env = _working_claude_env(tmp_path, log, model)
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id, ids["plan"] = await _plan_running_claude(agent, "draft")
        _run_id, approval = await _revision_asked(agent, thread_id)
        waiting = await _plan(agent, thread_id)
        [started] = _cli_runs(log)
        await _dies(started["pid"])  # stopped while the author decides
        approve = {"decision": "approve"}
        resumed = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": approval.id, "value": approve}
        )
        await agent.run_to_end(resumed["run_id"], within=90)
        _events, report = await _plan_ends(agent, thread_id, "completed", skip=1, within=90)
        done = await _plan(agent, thread_id)
    finally:
        await agent.kill()
    assert [t.id for t in approval.tasks] == ["b"] and approval.plan_id == ids["plan"]
    assert waiting["status"] == "paused" and [t["id"] for t in waiting["tasks"]] == ["a"]
    assert [(t["id"], t["status"]) for t in done["tasks"]] == [("b", "succeeded")]
    assert [(r["version"], r["task"]["id"]) for r in done["replaced"]] == [(1, "a")]
    assert "  Findings: Outline done." in report.splitlines()
    assert len(_cli_runs(log)) == 1  # Claude Code was not run again


async def test_a_rejected_revision_leaves_the_running_plan_going_as_it_was(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    log = tmp_path / "fake.log"
    ids: dict[str, str] = {}
    _revising(model, ids)
    env = _working_claude_env(tmp_path, log, model)
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id, ids["plan"] = await _plan_running_claude(agent, "draft")
        _run_id, approval = await _revision_asked(agent, thread_id)
        reject = {"decision": "reject", "reason": "keep drafting"}
        resumed = await agent.call(
            "run/resume", {"thread_id": thread_id, "interrupt_id": approval.id, "value": reject}
        )
        turn = await agent.run_to_end(resumed["run_id"], within=90)
        await agent.wait_for(lambda _evs: len(agent.background_runs(thread_id)) == 2, within=90)
        await agent.wait_for(lambda _evs: len(_cli_runs(log)) == 2, within=90)
        going = await _plan(agent, thread_id)
        await agent.call("plan/cancel", {"thread_id": thread_id, "plan_id": ids["plan"]})
        await _plan_ends(agent, thread_id, "aborted", skip=1, within=90)
    finally:
        await agent.kill()
    [result] = [e.event for e in turn if e.event.type == "tool_result"]
    assert "kept plan" in result.content and "keep drafting" in result.content  # type: ignore[union-attr]
    assert going["status"] == "running" and [t["id"] for t in going["tasks"]] == ["a"]
    [_, taken_up] = _cli_runs(log)  # its agent goes on in its own session
    assert taken_up["argv"][taken_up["argv"].index("--resume") + 1] == RECORDED_SESSION


async def test_the_author_messages_a_working_claude_code_task_from_the_run_tree(
    sidecar_data: Path, workspace: Path, tmp_path: Path, model: ScriptedModelServer
):
    """task/message: the author's own word reaches the CLI's stdin as the main agent's would;
    a message to an ended task is refused with its code."""
    log = tmp_path / "fake.log"
    env = {
        "ATRIUM_CLAUDE_BIN": str(_fake_claude(tmp_path)),
        "FAKE_CLI_TRANSCRIPT": str(_claude_transcript(tmp_path / "t.jsonl", ends=True)),
        "FAKE_CLI_HANG_AFTER": "2",
        "FAKE_CLI_RELEASE_AFTER_MESSAGES": "1",
        "FAKE_CLI_LOG": str(log),
        **model_env(model),
    }
    agent = await Sidecar.start(sidecar_data, workspace, **env)
    try:
        thread_id, plan_id = await _plan_running_claude(agent, "messaged")
        ref = {"thread_id": thread_id, "plan_id": plan_id, "task_id": "a"}
        sent = await agent.call("task/message", {**ref, "text": "Keep it short."})
        _events, _report = await _plan_ends(agent, thread_id, "completed", within=90)
        late = await _refused(agent, "task/message", {**ref, "text": "And more."})
        envelopes = (await agent.call("task/envelopes", ref))["envelopes"]
    finally:
        await agent.kill()
    assert sent["note"].startswith("Sent to task a: Claude Code takes the message")
    written = [
        e["line"] for e in map(json.loads, log.read_text().splitlines()) if e.get("kind") == "stdin"
    ]
    assert any("Keep it short." in line for line in written)
    [message] = [e for e in envelopes if e["kind"] == "message"]
    payload = {"text": "Keep it short.", "from": "the author", "delivery": "stdin"}
    assert message["payload"] == payload
    assert late == -32047
