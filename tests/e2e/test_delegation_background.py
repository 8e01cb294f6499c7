"""Delegate and keep talking, through the real sidecar with a scripted model on 127.0.0.1: a
delegated task runs in the background of its thread, the author's messages are answered while
it works, and its result comes back by itself as a turn of the main agent, exactly once, also
when the sidecar is killed between the task's end and the announcement's delivery."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar
from tests.e2e.test_sidecar_model import model_env
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.fakes.script import RecordedRequest

pytestmark = pytest.mark.anyio

FAST = {"ATRIUM_COORD_BACKOFF": "0.01"}
FINDINGS = "the river is wide, and the bridge is old"
ANNOUNCED = "[Background plan"


def _messages(request: RecordedRequest) -> list[dict[str, Any]]:
    return list(request.body["messages"])


def _is_task(request: RecordedRequest) -> bool:
    """A subagent's request: its first user message is its task."""
    users = [m for m in _messages(request) if m["role"] == "user"]
    return bool(users) and "Task: " in str(users[0]["content"])


def _is_announcement(request: RecordedRequest) -> bool:
    users = [m for m in _messages(request) if m["role"] == "user"]
    return bool(users) and ANNOUNCED in str(users[-1]["content"])


class Team:
    """The scripted model: tasks answer once released, the main agent answers at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.hold_author = threading.Event()
        self.hold_author.set()

    def __call__(self, request: RecordedRequest) -> Reply:
        if _is_task(request):
            return Reply.text(answer_text(FINDINGS)).after(self.release)
        if _is_announcement(request):
            return Reply.text(answer_text("Your summary is ready: " + FINDINGS))
        return Reply.text(answer_text("Hello! The summary is on its way.")).after(self.hold_author)


@pytest.fixture
def team() -> Team:
    return Team()


@pytest.fixture
def model(team: Team) -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        server.fallback = team
        yield server


async def _start(data: Path, workspace: Path, model: ScriptedModelServer) -> Sidecar:
    return await Sidecar.start(data, workspace, **model_env(model), **FAST)


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await _start(sidecar_data, workspace, model)
    yield process
    await process.kill()


async def _plan(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    return (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]


def _finished(events: list[RunEventParams], run_id: str) -> bool:
    return any(e.run_id == run_id and e.event.type == "run_finished" for e in events)


async def _announcement_turn(agent: Sidecar, thread_id: str, known: set[str]) -> str:
    """Wait for a turn of the thread that nobody started (the announcement's) to finish."""

    def started(events: list[RunEventParams]) -> bool:
        return any(r not in known and _finished(events, r) for r in agent.turns(thread_id))

    await agent.wait_for(started)
    [run_id] = [r for r in agent.turns(thread_id) if r not in known]
    return run_id


async def test_a_delegated_task_runs_in_the_background_and_its_result_comes_back_by_itself(
    agent: Sidecar, model: ScriptedModelServer, team: Team
):
    thread = await agent.call("thread/create", {})
    thread_id = thread["id"]
    first = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general Summarize my notes"}
    )
    events = await agent.run_to_end(first["run_id"])
    assert events[-1].event.type == "run_finished"
    plan = await _plan(agent, thread_id)
    assert plan["status"] == "running"
    assert plan["tasks"][0]["status"] in ("pending", "running")
    started = (await agent.call("thread/get", {"thread_id": thread_id}))["messages"][-1]
    assert "running in the background" in started["content"]

    # The author keeps talking: answered while the task still works.
    second = await agent.call("run/start", {"thread_id": thread_id, "text": "How are you?"})
    assert second.get("queued_id") is None
    await agent.run_to_end(second["run_id"])
    assert (await _plan(agent, thread_id))["tasks"][0]["status"] == "running"
    assert not any(_is_announcement(r) for r in model.generation_requests)

    # The task ends: a turn starts by itself, its prompt holding the result.
    team.release.set()
    announced = await _announcement_turn(agent, thread_id, {first["run_id"], second["run_id"]})
    assert (await _plan(agent, thread_id))["status"] == "completed"
    [request] = [r for r in model.generation_requests if _is_announcement(r)]
    assert FINDINGS in json.dumps(request.body["messages"])
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert got["messages"][-1]["content"] == "Your summary is ready: " + FINDINGS
    assert sum(ANNOUNCED in m["content"] for m in got["messages"]) == 1
    # The plan ran under a background run of its own, which started and ended by itself.
    [plan_run] = agent.background_runs(thread_id)
    background = [e for e in agent.events if e.background]
    assert {(e.thread_id, e.run_id) for e in background} == {(thread_id, plan_run)}
    assert [background[0].event.type, background[-1].event.type] == ["run_started", "run_finished"]
    assert announced not in {plan_run, first["run_id"], second["run_id"]}


async def test_an_announcement_survives_a_kill_before_its_delivery_and_comes_once(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer, team: Team
):
    agent = await _start(sidecar_data, workspace, model)
    thread_id = (await agent.call("thread/create", {}))["id"]
    first = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general Summarize my notes"}
    )
    await agent.run_to_end(first["run_id"])
    # The author's turn is held at its model call: the thread is busy when the task ends, so
    # the announcement waits in the queue for the turn to end.
    team.hold_author.clear()
    await agent.call("run/start", {"thread_id": thread_id, "text": "Still there?"})
    team.release.set()

    def ended(events: list[RunEventParams]) -> bool:
        return any(
            e.event.type == "plan_update" and e.event.plan.status == "completed"  # type: ignore[union-attr]
            for e in events
        )

    await agent.wait_for(ended)
    await agent.kill()
    assert not any(_is_announcement(r) for r in model.generation_requests)

    team.hold_author.set()
    again = await _start(sidecar_data, workspace, model)
    try:
        await _announcement_turn(again, thread_id, set())
        got = await again.call("thread/get", {"thread_id": thread_id})
        assert sum(ANNOUNCED in m["content"] for m in got["messages"]) == 1
        assert got["messages"][-1]["content"] == "Your summary is ready: " + FINDINGS
        assert (await again.call("queue/list", {"thread_id": thread_id}))["messages"] == []
        await again.shutdown()
    finally:
        await again.kill()
    third = await _start(sidecar_data, workspace, model)
    try:
        await third.call("thread/list")
        got = await third.call("thread/get", {"thread_id": thread_id})
        assert sum(ANNOUNCED in m["content"] for m in got["messages"]) == 1
        assert sum(_is_announcement(r) for r in model.generation_requests) == 1
    finally:
        await third.kill()


async def test_twenty_background_tasks_on_five_threads_never_hold_up_a_sixth(
    agent: Sidecar, model: ScriptedModelServer, team: Team
):
    listed = await agent.call("profile/list")
    profiles = [{**p, "concurrency": 20} if p["id"] == "general" else p for p in listed["profiles"]]
    await agent.call("profile/set", {"profiles": profiles})
    threads: list[str] = []
    for n in range(5):
        thread_id = (await agent.call("thread/create", {}))["id"]
        await agent.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
        tasks = [
            {"id": f"t{i}", "title": f"Task t{i}", "objective": f"Do t{i}.", "profile": "general"}
            for i in range(4)
        ]
        plan = {"goal": f"work {n}", "tasks": tasks}
        run = await agent.call(
            "run/start", {"thread_id": thread_id, "text": "/plan " + json.dumps(plan)}
        )
        await agent.run_to_end(run["run_id"])
        threads.append(thread_id)

    def all_running(events: list[RunEventParams]) -> bool:
        running = {
            (e.thread_id, e.event.task.id)  # type: ignore[union-attr]
            for e in events
            if e.event.type == "task_update" and e.event.task.status == "running"  # type: ignore[union-attr]
        }
        return len(running) == 20

    await agent.wait_for(all_running)
    chat = (await agent.call("thread/create", {}))["id"]
    for text in ("Hello?", "Anything new?", "Thanks."):
        run = await agent.call("run/start", {"thread_id": chat, "text": text})
        assert run.get("queued_id") is None
        events = await agent.run_to_end(run["run_id"])
        assert events[-1].event.type == "run_finished"
    for thread_id in threads:
        assert (await _plan(agent, thread_id))["status"] == "running"

    team.release.set()
    for thread_id in threads:
        await _announcement_turn(agent, thread_id, set(agent.turns(thread_id)[:1]))
        plan = await _plan(agent, thread_id)
        assert plan["status"] == "completed"
        assert {t["status"] for t in plan["tasks"]} == {"succeeded"}


async def test_the_main_agent_checks_its_team_and_messages_a_running_task(
    agent: Sidecar, model: ScriptedModelServer, team: Team
):
    said: dict[str, str] = {}
    task_requests: list[RecordedRequest] = []
    asked = threading.Event()

    def route(request: RecordedRequest) -> Reply:
        if _is_task(request):
            task_requests.append(request)
            asked.set()
            if len(task_requests) == 1:
                return Reply.tool_call("workspace__list", {"path": "."}).after(team.release)
            return Reply.text(answer_text(FINDINGS))
        if _is_announcement(request):
            return Reply.text(answer_text("Done: " + FINDINGS))
        last = str([m for m in _messages(request) if m["role"] == "user"][-1]["content"])
        tool_results = [m for m in _messages(request) if m["role"] == "tool"]
        if "status" in last and not said.get("status"):
            said["status"] = "asked"
            return Reply.tool_call("atrium__team_status", {})
        if "spelling" in last and not said.get("message"):
            said["message"] = "sent"
            arguments = {
                "plan_id": said["plan"],
                "task_id": "task",
                "text": "Use British spelling.",
            }
            return Reply.tool_call("atrium__task_message", arguments)
        return Reply.text(answer_text("Noted: " + str(tool_results[-1]["content"])[:60]))

    model.fallback = route
    thread_id = (await agent.call("thread/create", {}))["id"]
    first = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general Write the report"}
    )
    await agent.run_to_end(first["run_id"])
    plan = await _plan(agent, thread_id)
    said["plan"] = plan["id"]
    assert [t["id"] for t in plan["tasks"]] == ["task"]

    assert await asyncio.to_thread(asked.wait, 30)  # the subagent's first step is under way
    status = await agent.call("run/start", {"thread_id": thread_id, "text": "What's the status?"})
    await agent.run_to_end(status["run_id"])
    got = await agent.call("thread/get", {"thread_id": thread_id})
    result = [m for m in got["messages"] if m["role"] == "tool"][-1]
    assert result["content"].startswith(f"Plan {plan['id']} (running)")
    assert "task [running" in result["content"]

    message = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "Tell the writer about spelling."}
    )
    await agent.run_to_end(message["run_id"])
    team.release.set()
    await agent.plan_to_end(thread_id)
    second = json.dumps(task_requests[1].body["messages"])
    assert "[Message from the main agent] Use British spelling." in second
    assert "[Message from the main agent]" not in json.dumps(task_requests[0].body["messages"])


async def test_what_the_team_did_comes_back_after_a_restart(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer, team: Team
):
    calls: list[RecordedRequest] = []

    def route(request: RecordedRequest) -> Reply:
        if _is_task(request):
            calls.append(request)
            if len(calls) == 1:
                return Reply.tool_call("workspace__list", {"path": "."})
            return Reply.text(answer_text(FINDINGS))
        return team(request)

    model.fallback = route
    agent = await _start(sidecar_data, workspace, model)
    thread_id = (await agent.call("thread/create", {}))["id"]
    run = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general List my files"}
    )
    await agent.run_to_end(run["run_id"])
    await agent.plan_to_end(thread_id)
    await _announcement_turn(agent, thread_id, {run["run_id"]})
    plan = await _plan(agent, thread_id)
    await agent.shutdown()

    again = await _start(sidecar_data, workspace, model)
    try:
        listed = await again.call("plan/list", {})
        assert [(p["id"], p["thread_id"], p["status"]) for p in listed["plans"]] == [
            (plan["id"], thread_id, "completed")
        ]
        ref = {"thread_id": thread_id, "plan_id": plan["id"], "task_id": "task"}
        got = await again.call("task/events", ref)
        kinds = [e["event"]["type"] for e in got["events"]]
        assert "tool_call" in kinds and "tool_result" in kinds and not got["has_older"]
        [tool_call] = [e["event"] for e in got["events"] if e["event"]["type"] == "tool_call"]
        assert (tool_call["server"], tool_call["tool"]) == ("workspace", "list")
        thread = await again.call("thread/get", {"thread_id": thread_id})
        [announcement] = [m for m in thread["messages"] if m["announcement"]]
        assert announcement["role"] == "user" and FINDINGS in announcement["content"]
        assert not any(m["announcement"] for m in thread["messages"] if m is not announcement)
    finally:
        await again.kill()
