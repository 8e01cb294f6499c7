"""Routines through the real sidecar and a scripted model: a completed plan saved with a
parameter runs again with a new value, without a planning call and without asking for plan
approval; edited, it asks once more; a broken routine says why.

A plan runs in the background of its thread: the turn that starts it (or approves it) ends at
once, the tasks run under the thread's background run, and the plan's end is announced as a
turn of the main agent that starts by itself (its one model request)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import RpcFailure, Sidecar, event_types
from tests.e2e.test_plan_budget import _announcement, _is_task, _users
from tests.e2e.test_subagents import _plan, agent, model
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.script import RecordedRequest

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
__all__ = ["agent", "model"]  # the sidecar and scripted model fixtures of test_subagents

PLAN = {
    "goal": "Harbour report for Falmouth",
    "tasks": [
        {
            "id": "tides",
            "title": "Tides",
            "objective": "List the Falmouth tides.",
            "profile": "general",
        },
        {
            "id": "report",
            "title": "Report",
            "objective": "Write the Falmouth harbour report.",
            "profile": "general",
            "depends_on": ["tides"],
        },
    ],
}


def _prompt(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"])


def _done(request: RecordedRequest) -> Reply:
    del request
    return Reply.text(answer_text("done"))


async def _run(agent: Sidecar, thread_id: str, text: str) -> list[Any]:
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    return list(await agent.run_to_end(run["run_id"], within=120))


async def _approve(agent: Sidecar, thread_id: str, events: list[Any]) -> list[Any]:
    [pending] = [e.event.interrupt for e in events if e.event.type == "interrupt"]
    assert pending.kind == "plan_approval"
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": pending.id, "value": {"decision": "approve"}},
    )
    return list(await agent.run_to_end(resumed["run_id"], within=120))


async def _plan_ran(agent: Sidecar, thread_id: str, skip: int) -> list[Any]:
    """Wait for the thread's background plan run number `skip` to end and for the turn its
    end starts by itself (the announcement) to end; returns the plan run's events."""
    events = await agent.plan_to_end(thread_id, skip=skip, within=120)
    await _announcement(agent, thread_id, agent.background_runs(thread_id)[skip])
    return list(events)


async def _plan_approved(agent: Sidecar, thread_id: str) -> list[Any]:
    return await _approve(
        agent, thread_id, await _run(agent, thread_id, "/plan " + json.dumps(PLAN))
    )


async def test_a_saved_routine_runs_again_with_a_new_value_without_planning_or_approval(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    model.push(*[_done] * 6)
    thread = await agent.call("thread/create", {})
    first = await _approve(
        agent, thread["id"], await _run(agent, thread["id"], "/plan " + json.dumps(PLAN))
    )
    assert event_types(first)[-1] == "run_finished"
    assert event_types(await _plan_ran(agent, thread["id"], 0))[-1] == "run_finished"
    plan = await _plan(agent, thread["id"])
    assert plan["status"] == "completed"

    saved = await agent.call(
        "routine/save",
        {"plan_id": plan["id"], "name": "harbour-report", "parameters": {"port": "Falmouth"}},
    )
    assert saved["parameters"] == {"port": "Falmouth"} and saved["needs_approval"] is False
    assert (workspace / ".atrium" / "routines" / "harbour-report.json").is_file()
    listed = await agent.call("routine/list", {})
    # The saved one, beside the routine Atrium ships (no file until approved or edited).
    assert [r["name"] for r in listed["routines"]] == ["harbour-report", "write-review-revise"]
    before = len(model.generation_requests)

    again = await _run(agent, thread["id"], "/routine harbour-report port=Penzance")

    assert "interrupt" not in event_types(again)
    assert event_types(again)[-1] == "run_finished"
    assert not [r for r in model.generation_requests[before:] if not _is_task(r)]
    ran = await _plan_ran(agent, thread["id"], 1)
    assert "interrupt" not in event_types(ran)
    assert event_types(ran)[-1] == "run_finished"
    new_requests = model.generation_requests[before:]
    task_requests = [r for r in new_requests if _is_task(r)]
    assert len(task_requests) == 2  # one per task
    assert all("Penzance" in _prompt(r) and "Falmouth" not in _prompt(r) for r in task_requests)
    latest = await _plan(agent, thread["id"])
    assert latest["goal"] == "Harbour report for Penzance" and latest["status"] == "completed"
    # The main agent made no planning call: its one request is the announcement of the end.
    [announcement] = [r for r in new_requests if not _is_task(r)]
    assert f"[Background plan {latest['id']} ended: completed]" in _users(announcement)[-1]


async def test_an_edited_routine_asks_for_approval_once_then_runs_unasked(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    model.push(*[_done] * 9)
    thread = await agent.call("thread/create", {})
    await _approve(
        agent, thread["id"], await _run(agent, thread["id"], "/plan " + json.dumps(PLAN))
    )
    await _plan_ran(agent, thread["id"], 0)
    plan = await _plan(agent, thread["id"])
    await agent.call(
        "routine/save",
        {"plan_id": plan["id"], "name": "harbour", "parameters": {"port": "Falmouth"}},
    )
    path = workspace / ".atrium" / "routines" / "harbour.json"
    data = json.loads(path.read_text())
    data["tasks"][1]["objective"] = "Write the {{port}} harbour report, with the weather."
    path.write_text(json.dumps(data))

    asked = await _run(agent, thread["id"], "/routine harbour port=Fowey")
    assert "interrupt" in event_types(asked)
    await _approve(agent, thread["id"], asked)
    fowey = await _plan_ran(agent, thread["id"], 1)
    assert "interrupt" not in event_types(fowey)
    edited = await _plan(agent, thread["id"])
    assert edited["goal"] == "Harbour report for Fowey" and edited["status"] == "completed"
    unasked = await _run(agent, thread["id"], "/routine harbour port=Looe")

    assert "interrupt" not in event_types(unasked)
    assert event_types(unasked)[-1] == "run_finished"
    looe = await _plan_ran(agent, thread["id"], 2)
    assert "interrupt" not in event_types(looe)
    assert event_types(looe)[-1] == "run_finished"
    latest = await _plan(agent, thread["id"])
    assert latest["goal"] == "Harbour report for Looe" and latest["status"] == "completed"


async def test_a_broken_routine_or_a_running_plan_gives_a_clear_answer(
    agent: Sidecar, workspace: Path
) -> None:
    thread = await agent.call("thread/create", {})
    folder = workspace / ".atrium" / "routines"
    folder.mkdir(parents=True)
    (folder / "gone-profile.json").write_text(
        json.dumps(
            {
                "goal": "g",
                "parameters": {},
                "tasks": [{"id": "a", "title": "A", "objective": "o", "profile": "vanished"}],
            }
        )
    )

    missing = await _run(agent, thread["id"], "/routine nope")
    vanished = await _run(agent, thread["id"], "/routine gone-profile")

    texts = [
        e.event.message.content
        for e in [*missing, *vanished]
        if e.event.type == "message" and e.event.message.role == "assistant"
    ]
    assert any("no routine named 'nope'" in t for t in texts)
    assert any("vanished" in str(e.event) for e in vanished if e.event.type == "tool_result")
    with pytest.raises(RpcFailure) as failure:
        await agent.call("routine/save", {"plan_id": "plan-none", "name": "x"})
    assert failure.value.code == -32090
