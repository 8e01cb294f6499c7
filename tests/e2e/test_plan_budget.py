"""A plan's token budget through the real sidecar with a scripted model on 127.0.0.1: at 100%
the running task stops at its next step and the author is asked to raise the budget or stop;
spent and remaining are on the plan; a bad budget is refused before anything is stored.

The approved plan runs in the background of its thread: the turn that approved it ends at once,
the tasks' budget events and questions come on the plan's background run (answered with
`run/resume`, whose reply names that run), and the plan's end is announced into the thread as a
turn of the main agent that starts by itself."""

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

ANNOUNCED = "[Background plan"


def _users(request: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "user"]


def _is_task(request: RecordedRequest) -> bool:
    """A subagent's request: its first user message is its task."""
    users = _users(request)
    return bool(users) and "Task: " in users[0]


def _task_requests(model: ScriptedModelServer) -> list[RecordedRequest]:
    return [r for r in model.generation_requests if _is_task(r)]


def _announced(model: ScriptedModelServer) -> list[str]:
    """The announcements the main agent was asked about (its request's newest message)."""
    return [
        users[-1]
        for r in model.generation_requests
        if not _is_task(r) and (users := _users(r)) and ANNOUNCED in users[-1]
    ]


def _budget_events(events: list[RunEventParams]) -> list[dict[str, Any]]:
    return [e.event.model_dump() for e in events if e.event.type == "budget"]


async def _announcement(agent: Sidecar, thread_id: str, plan_run: str) -> list[RunEventParams]:
    """The turn the end of the background run `plan_run` starts by itself (the thread's first
    turn to start after that run finished): waits for it to end, returns its events."""

    def turn() -> str | None:
        ends = [
            n
            for n, e in enumerate(agent.events)
            if e.run_id == plan_run and e.event.type == "run_finished"
        ]
        for e in agent.events[ends[0] + 1 :] if ends else []:
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started":
                return e.run_id
        return None

    await agent.wait_for(lambda _evs: turn() is not None, within=120)
    run_id = turn()
    assert run_id is not None
    return await agent.run_to_end(run_id, within=120)


def _questions(events: list[RunEventParams]) -> list[Any]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt" and e.event.interrupt.kind == "question"  # type: ignore[union-attr]
    ]


def _plan_updates(events: list[RunEventParams]) -> list[dict[str, Any]]:
    return [e.event.plan.model_dump() for e in events if e.event.type == "plan_update"]  # type: ignore[union-attr]


async def _approved_plan(agent: Sidecar, plan: dict[str, Any]) -> tuple[str, str]:
    """Start `/plan` on a new thread and approve it; returns (thread id, the id of the
    background run the plan then runs under). The approving turn ends at once: its call's
    result says the plan runs in the background."""
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
    turn = await agent.run_to_end(resumed["run_id"])
    assert event_types(turn)[-1] == "run_finished"
    [started] = [e.event for e in turn if e.event.type == "tool_result"]
    assert "is running in the background" in started.content  # type: ignore[union-attr]
    await agent.wait_for(lambda _evs: bool(agent.background_runs(thread["id"])))
    [plan_run] = agent.background_runs(thread["id"])
    assert plan_run != resumed["run_id"]
    return thread["id"], plan_run


async def _plan(agent: Sidecar, thread_id: str) -> dict[str, Any]:
    return (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]


async def test_a_spent_budget_stops_the_plan_and_asks_the_author_who_stops_it(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(*[_answers] * 2)
    plan = {"goal": "frugal", "budget_tokens": 1, "tasks": [_task("a"), _task("b", ("a",))]}
    thread_id, plan_run = await _approved_plan(agent, plan)
    await agent.wait_for(lambda evs: bool(_questions(evs)), within=120)
    [asked] = [e for e in agent.events if _questions([e])]
    # A live question of the plan's background run: the turn that approved it has ended.
    assert (asked.run_id, asked.background) == (plan_run, True)
    [question] = _questions([asked])
    assert question.title == "[Task a] Plan budget spent"
    assert question.run_id == plan_run and question.live is True
    waiting = await _plan(agent, thread_id)
    # The offer doubles what was spent so far.
    offer = 2 * waiting["spent_tokens"]
    assert question.choices == (f"Raise the budget to {offer} tokens", "Stop the plan")
    assert waiting["budget_tokens"] == 1 and waiting["remaining_tokens"] == 0
    assert waiting["spent_tokens"] > 1 and waiting["budget_warned"] is True
    assert waiting["tasks"][0]["status"] == "waiting"
    assert len(model.generation_requests) == 1  # stopped at its next step, nothing more asked
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "Stop the plan"}},
    )
    assert resumed["run_id"] == plan_run  # answered in place, in the plan's run
    events = await agent.plan_to_end(thread_id, within=120)
    assert event_types(events)[-1] == "run_finished"
    ended = await _plan(agent, thread_id)
    tasks = {t["id"]: t for t in ended["tasks"]}
    assert ended["status"] == "aborted"
    assert tasks["a"]["status"] == "cancelled"
    assert tasks["a"]["error"].startswith("stopped: the plan's token budget is spent (")
    assert tasks["b"]["status"] == "cancelled"
    # The plan run saw the warning, the spending and the stop as they happened.
    assert [(b["scope"], b["state"]) for b in _budget_events(events)] == [
        ("plan", "warned"),
        ("plan", "spent"),
        ("plan", "stopped"),
    ]
    assert any(p["budget_warned"] for p in _plan_updates(events))
    # Its end is announced by itself: the main agent's one request; b never ran.
    await _announcement(agent, thread_id, plan_run)
    assert [_task_of(r) for r in _task_requests(model)] == ["a"]
    [announced] = _announced(model)
    assert f"[Background plan {ended['id']} ended: aborted]" in announced
    assert len(model.generation_requests) == 2


async def test_a_raised_budget_lets_the_stopped_task_go_on_and_finish(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(*[_answers] * 3)
    plan = {"goal": "raised", "budget_tokens": 1, "tasks": [_task("a")]}
    thread_id, plan_run = await _approved_plan(agent, plan)
    await agent.wait_for(lambda evs: bool(_questions(evs)), within=120)
    [question] = _questions(agent.events)
    assert question.run_id == plan_run
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": question.id, "value": {"answer": "1,000,000"}},
    )
    assert resumed["run_id"] == plan_run
    events = await agent.plan_to_end(thread_id, within=120)
    assert event_types(events)[-1] == "run_finished"
    done = await _plan(agent, thread_id)
    [task] = done["tasks"]
    assert (done["status"], task["status"]) == ("completed", "succeeded")
    assert done["budget_tokens"] == 1_000_000
    assert done["remaining_tokens"] == 1_000_000 - done["spent_tokens"]
    assert done["budget_warned"] is False  # the warning is given again for the new limit only
    assert [b["state"] for b in _budget_events(events)] == ["warned", "spent", "raised"]
    await _announcement(agent, thread_id, plan_run)
    assert {_task_of(r) for r in _task_requests(model)} == {"a"}
    [announced] = _announced(model)
    assert f"[Background plan {done['id']} ended: completed]" in announced


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
    thread_id, plan_run = await _approved_plan(agent, plan)
    events = await agent.plan_to_end(thread_id, within=120)

    assert event_types(events)[-1] == "run_finished"
    assert _questions(agent.events) == []  # 80% cuts; it does not ask
    assert [(b["scope"], b["state"]) for b in _budget_events(events)] == [("plan", "warned")]
    done = await _plan(agent, thread_id)
    tasks = {t["id"]: t for t in done["tasks"]}
    assert [tasks[t]["status"] for t in "abc"] == ["succeeded", "skipped", "succeeded"]
    assert tasks["b"]["optional"] is True and tasks["a"]["optional"] is False
    assert tasks["b"]["error"].startswith("cut: the plan's token budget is 80% spent")
    assert done["status"] == "completed" and done["budget_warned"] is True
    await _announcement(agent, thread_id, plan_run)
    assert sorted(_task_of(r) for r in _task_requests(model)) == ["a", "c"]
    [announced] = _announced(model)
    assert f"[Background plan {done['id']} ended: completed]" in announced
    assert len(model.generation_requests) == 3  # a, c and the announcement: b never ran


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
