"""A plan's token budget through the real sidecar with a scripted model on 127.0.0.1: at 100%
the running task stops at its next step and the author is asked to raise the budget or stop;
spent and remaining are on the plan; a bad budget is refused before anything is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_subagents import _answers, _task, _task_of, agent, model
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer

pytestmark = pytest.mark.anyio

__all__ = ["agent", "model"]  # the fixtures, shared with the subagent tests


def _questions(events: list[RunEventParams]) -> list[Any]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt" and e.event.interrupt.kind == "question"  # type: ignore[union-attr]
    ]


def _plan_updates(events: list[RunEventParams]) -> list[dict[str, Any]]:
    return [e.event.plan.model_dump() for e in events if e.event.type == "plan_update"]  # type: ignore[union-attr]


async def _approved_plan(agent: Sidecar, plan: dict[str, Any]) -> tuple[str, str]:
    """Start `/plan` on a new thread and approve it; returns (thread id, the resumed run)."""
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    events = await agent.run_to_end(run["run_id"])
    [pending] = [e.event.interrupt for e in events if e.event.type == "interrupt"]  # type: ignore[union-attr]
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": pending.id, "value": {"decision": "approve"}},
    )
    return thread["id"], resumed["run_id"]


async def _plan(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    return (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]


async def test_a_spent_budget_stops_the_plan_and_asks_the_author_who_stops_it(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(*[_answers] * 2)
    plan = {"goal": "frugal", "budget_tokens": 1, "tasks": [_task("a"), _task("b", ("a",))]}
    thread_id, run_id = await _approved_plan(agent, plan)
    await agent.wait_for(lambda evs: bool(_questions(evs)), within=120)
    [question] = _questions(agent.events)
    assert question.title == "[Task a] Plan budget spent"
    waiting = await _plan(agent, thread_id)
    # The offer doubles what was spent so far.
    offer = 2 * waiting["spent_tokens"]
    assert question.choices == (f"Raise the budget to {offer} tokens", "Stop the plan")
    assert waiting["budget_tokens"] == 1 and waiting["remaining_tokens"] == 0
    assert waiting["spent_tokens"] > 1 and waiting["budget_warned"] is True
    assert waiting["tasks"][0]["status"] == "waiting"
    assert len(model.generation_requests) == 1  # stopped at its next step, nothing more asked
    await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "Stop the plan"}},
    )
    events = await agent.run_to_end(run_id, within=120)
    assert event_types(events)[-1] == "run_finished"
    ended = await _plan(agent, thread_id)
    tasks = {t["id"]: t for t in ended["tasks"]}
    assert ended["status"] == "aborted"
    assert tasks["a"]["status"] == "cancelled"
    assert tasks["a"]["error"].startswith("stopped: the plan's token budget is spent (")
    assert tasks["b"]["status"] == "cancelled"
    assert len(model.generation_requests) == 1
    # The run tree saw the warning and the spending as they happened.
    assert any(p["budget_warned"] for p in _plan_updates(agent.events))


async def test_a_raised_budget_lets_the_stopped_task_go_on_and_finish(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(*[_answers] * 3)
    plan = {"goal": "raised", "budget_tokens": 1, "tasks": [_task("a")]}
    thread_id, run_id = await _approved_plan(agent, plan)
    await agent.wait_for(lambda evs: bool(_questions(evs)), within=120)
    [question] = _questions(agent.events)
    await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "1,000,000"}},
    )
    events = await agent.run_to_end(run_id, within=120)
    assert event_types(events)[-1] == "run_finished"
    done = await _plan(agent, thread_id)
    [task] = done["tasks"]
    assert (done["status"], task["status"]) == ("completed", "succeeded")
    assert done["budget_tokens"] == 1_000_000
    assert done["remaining_tokens"] == 1_000_000 - done["spent_tokens"]
    assert done["budget_warned"] is False  # the warning is given again for the new limit only


async def test_at_80_percent_an_optional_task_not_yet_started_is_cut_and_the_rest_runs(
    agent: Sidecar, model: ScriptedModelServer
):
    def costly_a(request: RecordedRequest) -> Reply:
        task = _task_of(request)
        spent = {"a": 850, "c": 50}.get(task, 10)  # a alone spends 85% of the budget
        return Reply.text(
            answer_text(f"done {task}"), usage={"input_tokens": spent, "output_tokens": 0}
        )

    model.push(*[costly_a] * 3)
    optional = {**_task("b", ("a",)), "optional": True}
    plan = {
        "goal": "lean",
        "budget_tokens": 1000,
        "tasks": [_task("a"), optional, _task("c", ("b",))],
    }
    thread_id, run_id = await _approved_plan(agent, plan)
    events = await agent.run_to_end(run_id, within=120)

    assert event_types(events)[-1] == "run_finished"
    assert _questions(events) == []  # 80% cuts; it does not ask
    done = await _plan(agent, thread_id)
    tasks = {t["id"]: t for t in done["tasks"]}
    assert [tasks[t]["status"] for t in "abc"] == ["succeeded", "skipped", "succeeded"]
    assert tasks["b"]["optional"] is True and tasks["a"]["optional"] is False
    assert tasks["b"]["error"].startswith("cut: the plan's token budget is 80% spent")
    assert sorted(_task_of(r) for r in model.generation_requests) == ["a", "c"]
    assert done["status"] == "completed" and done["budget_warned"] is True


@pytest.mark.parametrize("optional", ["yes", 1, None])
async def test_an_optional_that_is_not_true_or_false_is_refused(
    agent: Sidecar, model: ScriptedModelServer, optional: object
):
    thread = await agent.call("thread/create", {})
    plan = {"goal": "bad", "tasks": [{**_task("a"), "optional": optional}]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert "optional must be true or false" in got["messages"][-1]["content"]
    assert model.generation_requests == []


@pytest.mark.parametrize("budget", [0, -5, 2.5, "lots", True])
async def test_a_bad_budget_is_refused_with_a_clear_error_and_nothing_runs(
    agent: Sidecar, model: ScriptedModelServer, budget: object
):
    thread = await agent.call("thread/create", {})
    plan = {"goal": "bad", "budget_tokens": budget, "tasks": [_task("a")]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert "budget_tokens must be a whole number" in got["messages"][-1]["content"]
    assert (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"] == []
    assert model.generation_requests == []
