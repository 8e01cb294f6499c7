"""A thread's token/cost budget and a plan's cost budget through the real sidecar with a scripted
model on 127.0.0.1 (`openai/gpt-4o-mini`, priced from LiteLLM's bundled cost map): at 100% the
author's turn stops before its next planner step and the author is asked; raising it lets the
turn finish; an autonomous thread stops without asking; a plan's `budget_cost` stops its task.

A plan runs in the background of its thread: its budget events and questions come on its
background run, and its end is announced as a turn of the main agent that starts by itself (and
meets the thread's budget like any turn)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_plan_budget import (
    _announced,
    _announcement,
    _approved_plan,
    _plan,
    _questions,
    _task_requests,
)
from tests.e2e.test_subagents import _task, agent, model
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer

pytestmark = pytest.mark.anyio

__all__ = ["agent", "model"]  # the fixtures, shared with the subagent tests

# gpt-4o-mini: $0.15 per million input tokens.
PRICE_IN = 0.15 / 1_000_000


def _budget_events(events: list[RunEventParams]) -> list[dict[str, Any]]:
    return [e.event.model_dump() for e in events if e.event.type == "budget"]


def _costly_read(tokens: int) -> Reply:
    return Reply.tool_call(
        "workspace__read",
        {"path": "notes.md"},
        usage={"input_tokens": tokens, "output_tokens": 0},
    )


async def _budgeted_thread(agent: Sidecar, **limits: Any) -> str:
    thread = await agent.call("thread/create", {})
    result = await agent.call("thread/set_budget", {"thread_id": thread["id"], **limits})
    assert result["budget"]["budget_tokens"] == limits.get("budget_tokens")
    return thread["id"]


async def test_a_spent_thread_budget_stops_the_turn_before_its_next_step_and_a_raise_finishes_it(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    (workspace / "notes.md").write_text("The river is wide.")
    model.push(_costly_read(150), Reply.text(answer_text("The river is wide.")))
    thread_id = await _budgeted_thread(agent, budget_tokens=100)
    run = await agent.call("run/start", {"thread_id": thread_id, "text": "Read my notes"})
    events = await agent.run_to_end(run["run_id"], within=60)

    assert event_types(events)[-1] == "run_finished"
    [question] = _questions(events)
    assert question.title == "Thread budget spent"
    assert question.choices == ("Raise the budget to 300 tokens", "Stop")
    assert len(model.generation_requests) == 1  # the next step was not taken
    assert [b["state"] for b in _budget_events(events)] == ["warned"]
    waiting = await agent.call("thread/budget", {"thread_id": thread_id})
    assert waiting["spent_tokens"] == 0  # the turn's usage is recorded when it ends

    resumed = await agent.call(
        "run/resume",
        {
            "thread_id": thread_id,
            "interrupt_id": question.id,
            "value": {"answer": "Raise the budget to 300 tokens"},
        },
    )
    events = await agent.run_to_end(resumed["run_id"], within=60)
    assert event_types(events)[-1] == "run_finished"
    assert "raised" in [b["state"] for b in _budget_events(events)]
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert got["messages"][-1]["content"] == "The river is wide."
    assert len(model.generation_requests) == 2
    after = await agent.call("thread/budget", {"thread_id": thread_id})
    assert after["budget"]["budget_tokens"] == 300
    assert after["spent_tokens"] == after["budget"]["spent_tokens"] > 150
    assert after["spent_cost"] > 0 and after["cost_unknown"] is False


async def test_the_author_who_stops_ends_the_turn_with_the_reason(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(_costly_read(150))
    thread_id = await _budgeted_thread(agent, budget_tokens=100)
    run = await agent.call("run/start", {"thread_id": thread_id, "text": "Read my notes"})
    await agent.run_to_end(run["run_id"], within=60)
    [question] = _questions(agent.events)
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "Stop"}},
    )
    events = await agent.run_to_end(resumed["run_id"], within=60)
    assert event_types(events)[-1] == "run_finished"
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert got["messages"][-1]["content"].startswith("Stopped: the thread's budget is spent (")
    assert [b["state"] for b in _budget_events(events)] == ["stopped"]
    assert len(model.generation_requests) == 1


async def test_an_autonomous_thread_stops_without_asking_and_says_why(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(_costly_read(150))
    thread_id = await _budgeted_thread(agent, budget_tokens=100)
    await agent.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
    run = await agent.call("run/start", {"thread_id": thread_id, "text": "Read my notes"})
    events = await agent.run_to_end(run["run_id"], within=60)

    assert event_types(events)[-1] == "run_finished"
    assert _questions(events) == []
    got = await agent.call("thread/get", {"thread_id": thread_id})
    answer = got["messages"][-1]["content"]
    assert answer.startswith("Stopped: the thread's budget is spent (150 of 100 tokens")
    assert "autonomous" in answer
    assert [b["state"] for b in _budget_events(events)] == ["warned", "stopped"]
    assert len(model.generation_requests) == 1
    spent = await agent.call("thread/budget", {"thread_id": thread_id})
    assert spent["spent_tokens"] >= 150  # the stopped turn's usage is recorded


async def test_a_plans_cost_budget_stops_its_task_once_the_known_cost_reaches_it(
    agent: Sidecar, model: ScriptedModelServer
):
    costly = Reply.text(answer_text("done a"), usage={"input_tokens": 1000, "output_tokens": 0})
    model.push(costly)
    plan = {"goal": "priced", "budget_cost": 0.0001, "tasks": [_task("a")]}
    thread_id, plan_run = await _approved_plan(agent, plan)
    await agent.wait_for(lambda evs: bool(_questions(evs)), within=120)
    [question] = _questions(agent.events)
    assert question.title == "[Task a] Plan budget spent"
    assert question.choices == ("Raise the budget to $0.0003", "Stop the plan")
    assert question.run_id == plan_run  # a live question of the plan's background run
    waiting = await _plan(agent, thread_id)
    assert waiting["budget_cost"] == 0.0001 and waiting["budget_tokens"] is None
    assert waiting["spent_cost"] == pytest.approx(1000 * PRICE_IN)
    assert waiting["remaining_cost"] == 0 and waiting["budget_warned"] is True
    assert waiting["cost_unknown"] is False

    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "Stop the plan"}},
    )
    assert resumed["run_id"] == plan_run
    events = await agent.plan_to_end(thread_id, within=120)
    assert event_types(events)[-1] == "run_finished"
    assert [b["state"] for b in _budget_events(events)] == ["warned", "spent", "stopped"]
    ended = await _plan(agent, thread_id)
    [task] = ended["tasks"]
    assert ended["status"] == "aborted" and task["status"] == "cancelled"
    assert task["error"].startswith("stopped: the plan's cost budget is spent (")
    assert len(model.generation_requests) == 1
    # Its end is announced by itself, the main agent's one request.
    await _announcement(agent, thread_id, plan_run)
    assert len(_task_requests(model)) == 1
    [announced] = _announced(model)
    assert f"[Background plan {ended['id']} ended: aborted]" in announced
    assert len(model.generation_requests) == 2


async def test_a_plans_tasks_charge_the_thread_budget_and_stop_on_it(
    agent: Sidecar, model: ScriptedModelServer
):
    costly = Reply.text(answer_text("done a"), usage={"input_tokens": 500, "output_tokens": 0})
    model.push(costly)
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_budget", {"thread_id": thread["id"], "budget_tokens": 400})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "thread-bound", "tasks": [_task("a")]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    turn = await agent.run_to_end(run["run_id"], within=120)
    assert event_types(turn)[-1] == "run_finished"
    events = await agent.plan_to_end(thread["id"], within=120)
    assert event_types(events)[-1] == "run_finished"
    ended = await _plan(agent, thread["id"])
    [task] = ended["tasks"]
    assert (ended["status"], task["status"]) == ("aborted", "cancelled")
    assert task["error"].startswith("stopped: the thread's budget is spent (")
    # The thread's budget events of its task came on the plan's background run.
    assert [(b["scope"], b["state"]) for b in _budget_events(events)] == [
        ("thread", "warned"),
        ("thread", "stopped"),
    ]
    # The announcement's turn meets the spent budget before its first step: the autonomous
    # thread stops it without asking and without a model call.
    [plan_run] = agent.background_runs(thread["id"])
    announcement = await _announcement(agent, thread["id"], plan_run)
    assert [b["state"] for b in _budget_events(announcement)] == ["stopped"]
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["messages"][-2]["content"].startswith(
        f"[Background plan {ended['id']} ended: aborted]"
    )
    answer = got["messages"][-1]["content"]
    assert answer.startswith("Stopped: the thread's budget is spent (500 of 400 tokens)")
    assert "autonomous" in answer
    assert _questions(agent.events) == []
    assert len(model.generation_requests) == 1  # the task's only
    spent = await agent.call("thread/budget", {"thread_id": thread["id"]})
    assert spent["spent_tokens"] >= 500


async def test_a_bad_cost_budget_is_refused_before_anything_is_stored(
    agent: Sidecar, model: ScriptedModelServer
):
    thread = await agent.call("thread/create", {})
    plan = {"goal": "bad", "budget_cost": -1, "tasks": [_task("a")]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert "budget_cost must be a number of USD" in got["messages"][-1]["content"]
    assert (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"] == []
    assert model.generation_requests == []
