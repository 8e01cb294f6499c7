"""Subagents and the coordinator through the real sidecar, with a scripted model on 127.0.0.1:
delegation, plan approval, parallel caps, retries, live approvals answered out of order, and a
sidecar killed between a child's result and the join."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_sidecar_model import model_env
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.fakes.script import RecordedRequest

pytestmark = pytest.mark.anyio

FAST = {"ATRIUM_COORD_BACKOFF": "0.01"}


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


async def _start(data: Path, workspace: Path, model: ScriptedModelServer) -> Sidecar:
    process = await Sidecar.start(data, workspace, **model_env(model), **FAST)
    await process.call("initialize", {"client_name": "tests"})
    return process


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await _start(sidecar_data, workspace, model)
    yield process
    await process.kill()


def _task(task_id: str, deps: tuple[str, ...] = (), profile: str = "general") -> dict[str, Any]:
    return {
        "id": task_id,
        "title": f"Task {task_id}",
        "objective": f"Do {task_id}.",
        "profile": profile,
        "depends_on": list(deps),
    }


def _task_of(request: RecordedRequest) -> str:
    """Which task a subagent's model request is for (its first user message names it)."""
    for message in request.body["messages"]:
        if message["role"] == "user" and "Task: Task " in str(message["content"]):
            return str(message["content"]).split("Task: Task ", 1)[1].split()[0]
    return "?"


def _answers(request: RecordedRequest) -> Reply:
    return Reply.text(answer_text(f"done {_task_of(request)}"))


def _task_updates(events: list[RunEventParams]) -> list[dict[str, Any]]:
    return [e.event.task.model_dump() for e in events if e.event.type == "task_update"]  # type: ignore[union-attr]


async def _plan(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    return (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]


async def test_delegate_runs_a_subagent_on_its_own_sub_thread_and_returns_its_result(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(
        Reply.tool_call("workspace__read", {"path": "notes.md"}),
        Reply.text(answer_text("The notes say the river is wide.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/delegate researcher Read my notes"}
    )
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_finished"
    plan = await _plan(agent, thread["id"])
    [task] = plan["tasks"]
    assert (plan["status"], task["status"], task["attempt"]) == ("completed", "succeeded", 1)
    assert task["summary"] == "The notes say the river is wide."
    # The subagent started clean: its first request holds only its task, no parent history.
    first = model.generation_requests[0].body["messages"]
    assert [m["role"] for m in first if m["role"] != "system"] == ["user"]
    assert {t["function"]["name"] for t in model.generation_requests[0].body["tools"]} == {
        "workspace__list",
        "workspace__read",
        "workspace__search",
        "atrium__ask_author",
    }
    nested = [e.event for e in events if e.event.type == "subagent_event"]
    assert any(n.event["type"] == "tool_call" for n in nested)  # type: ignore[union-attr]
    listed = await agent.call("thread/list")
    assert [t["id"] for t in listed["threads"]] == [thread["id"]]
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert "The notes say the river is wide." in got["messages"][-1]["content"]
    sub = await agent.call("thread/get", {"thread_id": task["sub_thread_id"]})
    assert [m["role"] for m in sub["messages"]][0] == "user"
