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
    assert sub["messages"][0]["role"] == "user"


async def test_a_diamond_plan_waits_for_approval_runs_in_order_and_retries_a_failure(
    agent: Sidecar, model: ScriptedModelServer
):
    failed_once: list[str] = []

    def respond(request: RecordedRequest) -> Reply:
        if _task_of(request) == "b" and not failed_once:
            failed_once.append("b")
            return Reply.error(400, "the request was refused")
        return _answers(request)

    model.push(*[respond] * 8)
    thread = await agent.call("thread/create", {})
    plan = {
        "goal": "diamond",
        "tasks": [_task("a"), _task("b", ("a",)), _task("c", ("a",)), _task("d", ("b", "c"))],
    }
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    events = await agent.run_to_end(run["run_id"])
    [pending] = [e.event.interrupt for e in events if e.event.type == "interrupt"]  # type: ignore[union-attr]
    assert pending.kind == "plan_approval" and [t.id for t in pending.tasks] == ["a", "b", "c", "d"]
    assert model.generation_requests == []  # nothing runs before the author approves

    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": pending.id, "value": {"decision": "approve"}},
    )
    events = await agent.run_to_end(resumed["run_id"])
    assert event_types(events)[-1] == "run_finished"
    tasks = {t["id"]: t for t in (await _plan(agent, thread["id"]))["tasks"]}
    assert {t["status"] for t in tasks.values()} == {"succeeded"}
    assert tasks["b"]["attempt"] == 2 and tasks["a"]["attempt"] == 1
    order = [_task_of(r) for r in model.generation_requests]
    assert order[0] == "a" and order[-1] == "d"
    assert tasks["d"]["started_at"] >= max(tasks["b"]["finished_at"], tasks["c"]["finished_at"])


async def test_an_edited_plan_is_validated_and_a_rejected_plan_runs_nothing(
    agent: Sidecar, model: ScriptedModelServer
):
    thread = await agent.call("thread/create", {})
    plan = {"goal": "two", "tasks": [_task("a"), _task("b", ("a",))]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    events = await agent.run_to_end(run["run_id"])
    [pending] = [e.event.interrupt for e in events if e.event.type == "interrupt"]  # type: ignore[union-attr]
    bad = {"decision": "approve", "tasks": [_task("b", ("a",))]}  # dropped a, b still needs it
    with pytest.raises(Exception) as refused:
        await agent.call(
            "run/resume", {"thread_id": thread["id"], "interrupt_id": pending.id, "value": bad}
        )
    assert refused.value.error["code"] == -32004  # type: ignore[attr-defined]
    reject = {"decision": "reject", "reason": "not now"}
    resumed = await agent.call(
        "run/resume", {"thread_id": thread["id"], "interrupt_id": pending.id, "value": reject}
    )
    await agent.run_to_end(resumed["run_id"])
    assert (await _plan(agent, thread["id"]))["status"] == "rejected"
    assert model.generation_requests == []


async def test_an_invalid_plan_is_refused_with_a_clear_error(agent: Sidecar):
    thread = await agent.call("thread/create", {})
    plan = {"goal": "loop", "tasks": [_task("a", ("b",)), _task("b", ("a",))]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert "cycle" in got["messages"][-1]["content"]


async def test_twenty_subagents_never_exceed_their_profile_concurrency(
    agent: Sidecar, model: ScriptedModelServer
):
    listed = await agent.call("profile/list")
    profiles = [{**p, "concurrency": 4} if p["id"] == "general" else p for p in listed["profiles"]]
    await agent.call("profile/set", {"profiles": profiles})
    model.push(*[lambda r: _answers(r).delayed(0.05)] * 20)
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "many", "tasks": [_task(f"t{n}") for n in range(20)]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    events = await agent.run_to_end(run["run_id"], within=120)
    running: set[str] = set()
    peak = 0
    for update in _task_updates(events):
        if update["status"] == "running":
            running.add(update["id"])
        elif update["status"] in ("succeeded", "failed", "cancelled"):
            running.discard(update["id"])
        peak = max(peak, len(running))
    assert peak == 4
    plan_state = await _plan(agent, thread["id"])
    assert [t["status"] for t in plan_state["tasks"]] == ["succeeded"] * 20


def _writes_then_answers(request: RecordedRequest) -> Reply:
    """Each task's subagent first writes `<task>.md` (asks for approval), then answers."""
    task = _task_of(request)
    if any(m["role"] == "tool" for m in request.body["messages"]):
        return Reply.text(answer_text(f"wrote {task}"))
    return Reply.tool_call("workspace__write", {"path": f"{task}.md", "content": task})


async def _two_writers(agent: Sidecar, model: ScriptedModelServer) -> tuple[str, str]:
    model.push(*[_writes_then_answers] * 4)
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "two writers", "tasks": [_task("a"), _task("b")]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    return thread["id"], run["run_id"]


def _live(events: list[RunEventParams]) -> dict[str, Any]:
    return {
        e.event.interrupt.task_id: e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt"
    }


async def test_two_subagents_approvals_are_pending_at_once_and_answered_in_reverse_order(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    thread_id, run_id = await _two_writers(agent, model)
    await agent.wait_for(lambda evs: len(_live(evs)) == 2)
    pending = _live(agent.events)
    assert {i.kind for i in pending.values()} == {"approval"}
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert {i["task_id"] for i in got["interrupts"]} == {"a", "b"}
    for task_id in ("b", "a"):
        value = {"decision": "allow_once"}
        answered = await agent.call(
            "run/resume",
            {"thread_id": thread_id, "interrupt_id": pending[task_id].id, "value": value},
        )
        assert answered["run_id"] == run_id  # answered in place: the plan's run goes on
    events = await agent.run_to_end(run_id)
    assert event_types(events)[-1] == "run_finished"
    assert (workspace / "a.md").read_text() == "a" and (workspace / "b.md").read_text() == "b"
    assert [t["status"] for t in (await _plan(agent, thread_id))["tasks"]] == ["succeeded"] * 2
    # The plan call's result reports each task's files and stats from its envelope.
    got = await agent.call("thread/get", {"thread_id": thread_id})
    [report] = [m["content"] for m in got["messages"] if m["role"] == "tool"]
    assert "Files: a.md" in report and "Files: b.md" in report
    assert "1 attempt(s), 0 s" not in report  # the duration comes from the envelope


async def test_a_result_finished_before_a_crash_arrives_once_after_the_retry(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
):
    def respond(request: RecordedRequest) -> Reply:
        if _task_of(request) == "a":
            return Reply.text(answer_text("a is done"))
        return _writes_then_answers(request)

    model.push(*[respond] * 4)
    agent = await _start(sidecar_data, workspace, model)
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "crash", "tasks": [_task("a"), _task("b")]}
    await agent.call("run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)})

    def a_done_b_waiting(events: list[RunEventParams]) -> bool:
        done = any(u["id"] == "a" and u["status"] == "succeeded" for u in _task_updates(events))
        return done and "b" in _live(events)

    await agent.wait_for(a_done_b_waiting, within=120)  # a cold sidecar on a busy machine
    requests_before = len(model.generation_requests)
    await agent.kill()  # a's result is in the outbox; the join has not happened

    agent = await _start(sidecar_data, workspace, model)
    try:
        assert (await agent.call("thread/get", {"thread_id": thread["id"]}))["status"] == "failed"
        retried = await agent.call("run/retry", {"thread_id": thread["id"]})
        await agent.wait_for(lambda evs: "b" in _live(evs))
        again = _live(agent.events)["b"]
        await agent.call(
            "run/resume",
            {
                "thread_id": thread["id"],
                "interrupt_id": again.id,
                "value": {"decision": "allow_once"},
            },
        )
        events = await agent.run_to_end(retried["run_id"])
        assert event_types(events)[-1] == "run_finished"
        # a did not run again; only b's remaining work reached the model.
        assert [_task_of(r) for r in model.generation_requests[requests_before:]] == ["b"]
        got = await agent.call("thread/get", {"thread_id": thread["id"]})
        results = [m for m in got["messages"] if m["role"] == "tool"]
        assert len(results) == 1 and "a is done" in results[0]["content"]
        assert "wrote b" in results[0]["content"]
    finally:
        await agent.kill()


async def test_a_stalled_subagent_is_stopped_escalated_and_retried_on_the_authors_word(
    agent: Sidecar, model: ScriptedModelServer
):
    # A first delegation warms the model path up, so the stall below is the model's alone.
    model.push(Reply.text(answer_text("warm")))
    thread = await agent.call("thread/create", {})
    warm = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/delegate general Hi"}
    )
    await agent.run_to_end(warm["run_id"])
    model.push(
        Reply.text(answer_text("too late")).delayed(30),
        lambda r: Reply.text(answer_text("second wind")),
    )
    listed = await agent.call("profile/list")
    quick = {**listed["profiles"][0], "id": "quick", "stall_seconds": 1, "max_attempts": 1}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], quick]})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "/delegate quick Wait"})
    await agent.wait_for(
        lambda evs: "task" in _live(evs) and any(u["stalled"] for u in _task_updates(evs))
    )
    escalation = _live(agent.events)["task"]
    assert escalation.kind == "escalation" and escalation.reason == "stalled"
    [stalled] = (await _plan(agent, thread["id"]))["tasks"]
    assert (stalled["stalled"], stalled["status"]) == (True, "waiting")
    await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": escalation.id, "value": {"action": "retry"}},
    )
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_finished"
    [task] = (await _plan(agent, thread["id"]))["tasks"]
    assert (task["status"], task["summary"], task["stalled"]) == ("succeeded", "second wind", False)


async def test_a_subagent_over_its_token_budget_is_stopped_and_escalated_as_budget(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(Reply.tool_call("workspace__read", {"path": "notes.md"}))
    listed = await agent.call("profile/list")
    frugal = {**listed["profiles"][0], "id": "frugal", "budget_tokens": 1}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], frugal]})
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "/delegate frugal Go"})
    await agent.wait_for(lambda evs: "task" in _live(evs))
    escalation = _live(agent.events)["task"]
    assert (escalation.kind, escalation.reason) == ("escalation", "budget")
    assert escalation.attempts == 1  # a budget stop is not retried on its own
    await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": escalation.id, "value": {"action": "abort"}},
    )
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_finished"
    plan = await _plan(agent, thread["id"])
    [task] = plan["tasks"]
    assert (plan["status"], task["status"]) == ("aborted", "cancelled")
    assert task["tokens_in"] > 1
    assert len(model.generation_requests) == 1


async def test_after_a_failed_plan_the_authors_next_message_lets_the_planner_revise_it(
    agent: Sidecar, model: ScriptedModelServer
):
    plan_calls: list[str] = []

    def respond(request: RecordedRequest) -> Reply:
        task = _task_of(request)
        if task == "a" and sum(_task_of(r) == "a" for r in model.generation_requests) <= 3:
            return Reply.error(400, "the request was refused")
        if task != "?":
            return _answers(request)
        if any(m["role"] == "tool" for m in request.body["messages"]):
            return Reply.text(answer_text("The revised plan is done."))
        plan_calls.append(json.dumps(request.body["messages"]))
        revised = {"goal": "retry", "plan_id": plan_id, "tasks": [_task("a"), _task("b", ("a",))]}
        return Reply.tool_call("atrium__plan", revised)

    model.push(*[respond] * 12)
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "three", "tasks": [_task("c"), _task("a"), _task("b", ("a",))]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    first = await _plan(agent, thread["id"])
    plan_id = first["id"]
    states = {t["id"]: t["status"] for t in first["tasks"]}
    assert (first["status"], states) == (
        "failed",
        {"c": "succeeded", "a": "failed", "b": "cancelled"},
    )

    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "Please try the failed part again."}
    )
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_finished"
    assert plan_id in plan_calls[0] and "ended failed" in plan_calls[0]
    revised = await _plan(agent, thread["id"])
    assert (revised["id"], revised["version"], revised["status"]) == (plan_id, 2, "completed")
    assert {t["id"]: t["status"] for t in revised["tasks"]} == {
        "c": "succeeded",
        "a": "succeeded",
        "b": "succeeded",
    }
    assert [_task_of(r) for r in model.generation_requests].count("c") == 1  # kept, not re-run


async def test_a_subagent_that_may_spawn_delegates_within_its_depth_and_no_deeper(
    agent: Sidecar, model: ScriptedModelServer
):
    lead_saw: list[str] = []

    def respond(request: RecordedRequest) -> Reply:
        task = _task_of(request)
        results = [m["content"] for m in request.body["messages"] if m["role"] == "tool"]
        if task != "lead":
            return _answers(request)
        lead_saw[:] = results
        if not results:  # "shallow" (profile general, max depth 1) cannot run at depth 2
            both = {"tasks": [_task("leaf", profile="deep"), _task("shallow")]}
            return Reply.tool_call("atrium__delegate", both)
        if len(results) == 1:
            return Reply.tool_call("atrium__delegate", {"tasks": [_task("leaf", profile="deep")]})
        return Reply.text(answer_text("the leaf is done"))

    model.push(*[respond] * 6)
    listed = await agent.call("profile/list")
    lead = {**listed["profiles"][0], "id": "lead", "may_spawn": True, "max_depth": 2}
    deep = {**listed["profiles"][0], "id": "deep", "max_depth": 2}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], lead, deep]})
    thread = await agent.call("thread/create", {})
    text = "/delegate " + json.dumps({"tasks": [_task("lead", profile="lead")]})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_finished"
    [task] = (await _plan(agent, thread["id"]))["tasks"]
    assert (task["status"], task["summary"]) == ("succeeded", "the leaf is done")
    refused, ran = lead_saw
    assert "may not run at depth 2" in refused
    assert "[succeeded] leaf" in ran
    assert [_task_of(r) for r in model.generation_requests].count("leaf") == 1
    # The leaf ran under the lead's sub-thread, so its plan belongs there, not to the thread.
    assert len((await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"]) == 1
