"""Subagents and the coordinator through the real sidecar, with a scripted model on 127.0.0.1:
delegation, plan approval, parallel caps, retries, live approvals answered out of order, and a
sidecar killed between a child's result and the plan's end.

Delegation does not block: the turn that delegates ends once its plan is approved and handed
off, its call answered with a note that the plan runs in the background. The plan's tasks run
under a background run of the thread (`run/event`s marked `background`, from `run_started` to
`run_finished`), whose questions are live interrupts answered with `run/resume`; when the plan
ends its report is announced into the thread as a message, and a turn of the main agent starts
by itself to take it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import TERMINAL_EVENT_TYPES, RunEventParams
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


ANNOUNCED = "[Background plan "
"""How the message that announces a background plan's end begins."""


def _last_user(request: RecordedRequest) -> str:
    users = [str(m["content"]) for m in request.body["messages"] if m["role"] == "user"]
    return users[-1] if users else ""


def _is_announcement(request: RecordedRequest) -> bool:
    """A request of the main agent's turn that takes a plan's announcement."""
    return ANNOUNCED in _last_user(request)


def _handed_off(turn: list[RunEventParams], plan_id: str) -> str:
    """The result of the turn's plan call: the plan was handed off to run in the background."""
    [note] = [
        e.event.content  # type: ignore[union-attr]
        for e in turn
        if e.event.type == "tool_result"
        and e.event.content.startswith(f"Plan {plan_id} is running in the background")  # type: ignore[union-attr]
    ]
    return note


def _announcement_turn(agent: Sidecar, thread_id: str, plan_run: str) -> str | None:
    """The turn that started on the thread after the background run `plan_run` ended."""
    events = agent.events
    ends = [
        i
        for i, e in enumerate(events)
        if e.run_id == plan_run and e.event.type in TERMINAL_EVENT_TYPES
    ]
    if not ends:
        return None
    later = [
        e.run_id
        for e in events[ends[0] :]
        if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
    ]
    return later[0] if later else None


async def _plan_ends(
    agent: Sidecar, thread_id: str, status: str, *, skip: int = 0, within: float = 60
) -> tuple[list[RunEventParams], str]:
    """Wait for the thread's background plan run number `skip` to end and for the turn its
    announcement starts by itself to end. Returns the plan run's events and the announcement,
    which says the plan ended with `status` and is in the thread once."""
    events = await agent.plan_to_end(thread_id, skip=skip, within=within)
    plan_run = agent.background_runs(thread_id)[skip]
    assert all(e.background and e.thread_id == thread_id for e in events)
    assert (events[0].event.type, events[-1].event.type) == ("run_started", "run_finished")
    await agent.wait_for(lambda _evs: _announcement_turn(agent, thread_id, plan_run) is not None)
    turn = _announcement_turn(agent, thread_id, plan_run)
    assert turn is not None
    assert event_types(await agent.run_to_end(turn, within))[-1] == "run_finished"
    [plan_id] = {e.event.plan.id for e in events if e.event.type == "plan_update"}  # type: ignore[union-attr]
    head = f"{ANNOUNCED}{plan_id} ended: {status}]\n"
    got = await agent.call("thread/get", {"thread_id": thread_id})
    [announced] = [m for m in got["messages"] if m["content"].startswith(head)]
    assert announced["role"] == "user"
    return events, announced["content"]


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
    turn = await agent.run_to_end(run["run_id"])
    assert event_types(turn)[-1] == "run_finished"
    assert not any(e.background for e in turn)
    events, announced = await _plan_ends(agent, thread["id"], "completed")
    plan = await _plan(agent, thread["id"])
    [task] = plan["tasks"]
    assert (plan["status"], task["status"], task["attempt"]) == ("completed", "succeeded", 1)
    assert task["summary"] == "The notes say the river is wide."
    # The turn's call was answered at once: the plan went to the background.
    note = _handed_off(turn, plan["id"])
    [line] = note.splitlines()[1:]  # the task's id, title, status and profile
    assert line.startswith(f"- {task['id']} (Read my notes): ")
    assert line.endswith("; profile researcher")
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
    # The result comes back as the plan's announcement, taken by a turn of the main agent.
    assert "  Findings: The notes say the river is wide." in announced.splitlines()
    [request] = [r for r in model.generation_requests if _is_announcement(r)]
    assert "Findings: The notes say the river is wide." in _last_user(request)
    assert model.generation_requests[-1] is request
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert [m["content"] for m in got["messages"] if m["role"] == "tool"] == [note]
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
    turn = await agent.run_to_end(resumed["run_id"])
    assert event_types(turn)[-1] == "run_finished"
    _handed_off(turn, pending.plan_id)
    events, announced = await _plan_ends(agent, thread["id"], "completed")
    assert not any(e.event.type == "interrupt" for e in events)  # approved once, in the turn
    tasks = {t["id"]: t for t in (await _plan(agent, thread["id"]))["tasks"]}
    assert {t["status"] for t in tasks.values()} == {"succeeded"}
    assert tasks["b"]["attempt"] == 2 and tasks["a"]["attempt"] == 1
    requests = model.generation_requests
    assert [_is_announcement(r) for r in requests] == [False] * 5 + [True]
    order = [_task_of(r) for r in requests[:-1]]
    assert order[0] == "a" and order[-1] == "d"
    assert tasks["d"]["started_at"] >= max(tasks["b"]["finished_at"], tasks["c"]["finished_at"])
    assert "- [succeeded] b (Task b); profile general; 2 attempt(s)," in announced


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
    assert agent.background_runs(thread["id"]) == []  # nothing was handed off


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
    assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
    events, _announced = await _plan_ends(agent, thread["id"], "completed", within=120)
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
    """Each task's subagent first writes `<task>.md` (asks for approval), then answers; the
    main agent (taking a plan's announcement) only answers."""
    task = _task_of(request)
    if task == "?":
        return Reply.text(answer_text("The writers are done."))
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
    turn = await agent.run_to_end(run_id)
    assert event_types(turn)[-1] == "run_finished"  # the turn does not wait for the writers
    await agent.wait_for(lambda evs: len(_live(evs)) == 2)
    [plan_run] = agent.background_runs(thread_id)
    pending = _live(agent.events)
    assert {i.kind for i in pending.values()} == {"approval"}
    asked = [e for e in agent.events if e.event.type == "interrupt"]
    assert {(e.run_id, e.background) for e in asked} == {(plan_run, True)}
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert {i["task_id"] for i in got["interrupts"]} == {"a", "b"}
    for task_id in ("b", "a"):
        value = {"decision": "allow_once"}
        answered = await agent.call(
            "run/resume",
            {"thread_id": thread_id, "interrupt_id": pending[task_id].id, "value": value},
        )
        assert answered["run_id"] == plan_run  # answered in place: the plan's run goes on
    _events, report = await _plan_ends(agent, thread_id, "completed")
    assert (workspace / "a.md").read_text() == "a" and (workspace / "b.md").read_text() == "b"
    plan = await _plan(agent, thread_id)
    assert [t["status"] for t in plan["tasks"]] == ["succeeded"] * 2
    # The plan call's result says it was handed off; the plan's report, announced when it
    # ended, reports each task's files and stats from its envelope.
    got = await agent.call("thread/get", {"thread_id": thread_id})
    tool_results = [m["content"] for m in got["messages"] if m["role"] == "tool"]
    assert tool_results == [_handed_off(turn, plan["id"])]
    assert "Files: a.md" in report and "Files: b.md" in report
    assert "1 attempt(s), 0 s" not in report  # the duration comes from the envelope
    assert sum(_is_announcement(r) for r in model.generation_requests) == 1


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
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    turn = await agent.run_to_end(run["run_id"])

    def a_done_b_waiting(events: list[RunEventParams]) -> bool:
        done = any(u["id"] == "a" and u["status"] == "succeeded" for u in _task_updates(events))
        return done and "b" in _live(events)

    await agent.wait_for(a_done_b_waiting, within=120)  # a cold sidecar on a busy machine
    requests_before = len(model.generation_requests)
    await agent.kill()  # a's result is in the outbox; the plan has not ended

    agent = await _start(sidecar_data, workspace, model)
    try:
        # The crash took no turn down: the thread is as its turn left it, and the plan is
        # taken up by itself at start-up, under a new background run.
        assert (await agent.call("thread/get", {"thread_id": thread["id"]}))["status"] == "idle"
        await agent.wait_for(lambda evs: "b" in _live(evs))
        [plan_run] = agent.background_runs(thread["id"])
        again = _live(agent.events)["b"]
        answered = await agent.call(
            "run/resume",
            {
                "thread_id": thread["id"],
                "interrupt_id": again.id,
                "value": {"decision": "allow_once"},
            },
        )
        assert answered["run_id"] == plan_run
        _events, report = await _plan_ends(agent, thread["id"], "completed")
        # a did not run again; only b's remaining work reached the model, then the main agent
        # took the announcement.
        after = model.generation_requests[requests_before:]
        assert [(_task_of(r), _is_announcement(r)) for r in after] == [("b", False), ("?", True)]
        # The plan's report arrives once, with a's result from before the crash and b's.
        assert "a is done" in report and "wrote b" in report
        got = await agent.call("thread/get", {"thread_id": thread["id"]})
        results = [m["content"] for m in got["messages"] if m["role"] == "tool"]
        assert results == [_handed_off(turn, (await _plan(agent, thread["id"]))["id"])]
        assert sum(m["content"].startswith(ANNOUNCED) for m in got["messages"]) == 1
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
    await _plan_ends(agent, thread["id"], "completed")  # and its announcement answered
    model.push(
        Reply.text(answer_text("too late")).delayed(30),
        lambda r: Reply.text(answer_text("second wind")),
    )
    listed = await agent.call("profile/list")
    quick = {**listed["profiles"][0], "id": "quick", "stall_seconds": 1, "max_attempts": 1}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], quick]})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "/delegate quick Wait"})
    assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
    await agent.wait_for(
        lambda evs: "task" in _live(evs) and any(u["stalled"] for u in _task_updates(evs))
    )
    escalation = _live(agent.events)["task"]
    assert escalation.kind == "escalation" and escalation.reason == "stalled"
    [stalled] = (await _plan(agent, thread["id"]))["tasks"]
    assert (stalled["stalled"], stalled["status"]) == (True, "waiting")
    answered = await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": escalation.id, "value": {"action": "retry"}},
    )
    assert answered["run_id"] == agent.background_runs(thread["id"])[1]
    _events, report = await _plan_ends(agent, thread["id"], "completed", skip=1)
    [task] = (await _plan(agent, thread["id"]))["tasks"]
    assert (task["status"], task["summary"], task["stalled"]) == ("succeeded", "second wind", False)
    assert "  Findings: second wind" in report.splitlines()


async def test_a_subagent_over_its_token_budget_is_stopped_and_escalated_as_budget(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(Reply.tool_call("workspace__read", {"path": "notes.md"}))
    listed = await agent.call("profile/list")
    frugal = {**listed["profiles"][0], "id": "frugal", "budget_tokens": 1}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], frugal]})
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "/delegate frugal Go"})
    assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
    await agent.wait_for(lambda evs: "task" in _live(evs))
    escalation = _live(agent.events)["task"]
    assert (escalation.kind, escalation.reason) == ("escalation", "budget")
    assert escalation.attempts == 1  # a budget stop is not retried on its own
    answered = await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": escalation.id, "value": {"action": "abort"}},
    )
    assert [answered["run_id"]] == agent.background_runs(thread["id"])
    _events, report = await _plan_ends(agent, thread["id"], "aborted")
    plan = await _plan(agent, thread["id"])
    [task] = plan["tasks"]
    assert (plan["status"], task["status"]) == ("aborted", "cancelled")
    assert task["tokens_in"] > 1
    assert f"- [cancelled] {task['id']} " in report
    # One request of the task, then the main agent's, taking the announcement.
    assert [_is_announcement(r) for r in model.generation_requests] == [False, True]


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
        if _is_announcement(request):
            return Reply.text(answer_text("The plan has ended."))
        latest = _last_user(request)
        answered = request.body["messages"][-1]["role"] == "tool"
        if "Please try the failed part again." not in latest or answered:
            return Reply.text(answer_text("The revised plan is on its way."))
        plan_calls.append(json.dumps(request.body["messages"]))
        revised = {"goal": "retry", "plan_id": plan_id, "tasks": [_task("a"), _task("b", ("a",))]}
        return Reply.tool_call("atrium__plan", revised)

    model.fallback = respond
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "three", "tasks": [_task("c"), _task("a"), _task("b", ("a",))]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    _events, report = await _plan_ends(agent, thread["id"], "failed")
    first = await _plan(agent, thread["id"])
    plan_id = first["id"]
    states = {t["id"]: t["status"] for t in first["tasks"]}
    assert (first["status"], states) == (
        "failed",
        {"c": "succeeded", "a": "failed", "b": "cancelled"},
    )
    assert f"To revise the plan call atrium__plan with plan_id={plan_id!r}" in report
    assert plan_calls == []  # the announcement alone revises nothing: the author decides

    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "Please try the failed part again."}
    )
    turn = await agent.run_to_end(run["run_id"])
    assert event_types(turn)[-1] == "run_finished"
    [call] = plan_calls
    assert plan_id in call and "ended failed" in call
    _handed_off(turn, plan_id)
    _events, report = await _plan_ends(agent, thread["id"], "completed", skip=1)
    revised = await _plan(agent, thread["id"])
    assert (revised["id"], revised["version"], revised["status"]) == (plan_id, 2, "completed")
    assert {t["id"]: t["status"] for t in revised["tasks"]} == {
        "c": "succeeded",
        "a": "succeeded",
        "b": "succeeded",
    }
    assert [_task_of(r) for r in model.generation_requests].count("c") == 1  # kept, not re-run
    assert all(f"- [succeeded] {t} (Task {t})" in report for t in ("a", "b", "c"))
    # The replan kept the history of what failed or never ran, under the version it was in.
    history = [(r["version"], r["task"]["id"], r["task"]["status"]) for r in revised["replaced"]]
    assert history == [(1, "a", "failed"), (1, "b", "cancelled")]
    assert revised["replaced"][0]["task"]["error"]
    assert "- v1 [failed] a (Task a): " in report
    assert "- v1 [cancelled] b (Task b): " in report


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
    _events, report = await _plan_ends(agent, thread["id"], "completed")
    [task] = (await _plan(agent, thread["id"]))["tasks"]
    assert (task["status"], task["summary"]) == ("succeeded", "the leaf is done")
    assert "  Findings: the leaf is done" in report.splitlines()
    refused, ran = lead_saw
    assert "may not run at depth 2" in refused
    assert "[succeeded] leaf" in ran
    assert [_task_of(r) for r in model.generation_requests].count("leaf") == 1
    # The leaf ran under the lead's sub-thread, so its plan belongs there, not to the thread;
    # the lead waited for it inside its task: only the thread's own plan ran in the background.
    assert len((await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"]) == 1
    assert {e.run_id for e in agent.events if e.background} == set(
        agent.background_runs(thread["id"])
    )
    assert len(agent.background_runs(thread["id"])) == 1


async def test_a_subagent_whose_model_refuses_the_key_runs_once_and_asks_at_once(
    agent: Sidecar, model: ScriptedModelServer
):
    """A refused key is no transient failure: the task's one attempt ends it, and the author
    is asked at once with the model's own headline (not a retried 'PlannerError')."""
    model.push(Reply.error(401))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "/delegate general Go"})
    assert event_types(await agent.run_to_end(run["run_id"]))[-1] == "run_finished"
    await agent.wait_for(lambda evs: "task" in _live(evs))
    escalation = _live(agent.events)["task"]
    assert (escalation.kind, escalation.reason, escalation.attempts) == ("escalation", "failed", 1)
    assert not escalation.error.startswith("PlannerError")
    assert "key" in escalation.error.lower()
    await agent.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": escalation.id, "value": {"action": "abort"}},
    )
    await _plan_ends(agent, thread["id"], "aborted")
    assert len([r for r in model.generation_requests if not _is_announcement(r)]) == 1


async def test_a_subagent_tells_a_sibling_task_what_it_found_before_its_next_step(
    agent: Sidecar, model: ScriptedModelServer
):
    """Agents talk through the coordinator: task a's observation to task b, running beside it,
    is an envelope from a to b, and b reads it before its next step."""
    seen_by_b: list[str] = []
    mark = "[Observation from task a] The river is the Fal."

    def respond(request: RecordedRequest) -> Reply:
        task = _task_of(request)
        messages = request.body["messages"]
        answered = any(m["role"] == "tool" for m in messages)
        if task == "a" and not answered:
            note = {"to": "b", "kind": "observation", "text": "The river is the Fal."}
            return Reply.tool_call("atrium__team_note", note)
        if task == "a":
            return Reply.text(answer_text("done a"))
        if task == "b" and not any(mark in str(m["content"]) for m in messages):
            return Reply.tool_call("workspace__list", {})  # b works on until a's note comes
        if task == "b":
            seen_by_b.extend(str(m["content"]) for m in messages)
            return Reply.text(answer_text("done b"))
        return Reply.text(answer_text("The team's work is done."))

    model.fallback = respond
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "river", "tasks": [_task("a"), _task("b")]}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    await agent.run_to_end(run["run_id"])
    await _plan_ends(agent, thread["id"], "completed")
    plan_id = (await _plan(agent, thread["id"]))["id"]
    ref = {"thread_id": thread["id"], "plan_id": plan_id, "task_id": "b"}
    envelopes = (await agent.call("task/envelopes", ref))["envelopes"]
    [note] = [e for e in envelopes if e["kind"] == "observation"]
    assert note["sender"].endswith("/task/a") and note["receiver"].endswith("/task/b")
    assert note["payload"] == {"text": "The river is the Fal.", "from": "task a"}
    assert note["reply_to"] and note["acked_at"] is not None
    assert any(mark in content for content in seen_by_b)
