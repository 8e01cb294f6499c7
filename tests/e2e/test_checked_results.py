"""Checked results through the real sidecar with a scripted model on 127.0.0.1 that logs
prompts: a task with acceptance criteria is checked by a verifier (a cheap subagent, or a
command in the sandbox); a failed check goes back to the agent with its reasons; a verifier
that never answers fails the check within its bound. The plans run in the background of their
threads (the turn that hands one off ends at once); the checks are events of the plan's
background run, and its end is announced into the thread."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from sidecar.protocol import RunEventParams, TaskCheck
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_subagents import (
    _answers,
    _is_announcement,
    _last_user,
    _plan_ends,
    _task,
    agent,
    model,
)
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.script import RecordedRequest

pytestmark = pytest.mark.anyio

__all__ = ["agent", "model"]  # the fixtures, shared with the subagent tests


_VERIFIER_MARK = "Check whether a finished task's result meets its acceptance criteria."


def _is_check(request: RecordedRequest) -> bool:
    return any(
        m["role"] == "user" and _VERIFIER_MARK in str(m["content"])
        for m in request.body["messages"]
    )


def _checks(events: list[RunEventParams]) -> list[dict[str, Any]]:
    """The checks shown in the run tree, each a valid wire `TaskCheck`."""
    found = [
        e.event.event  # type: ignore[union-attr]
        for e in events
        if e.event.type == "subagent_event" and e.event.event.get("type") == "check"  # type: ignore[union-attr]
    ]
    return [TaskCheck.model_validate(c).model_dump() for c in found]


async def _run_plan(agent: Sidecar, tasks: list[dict[str, Any]]) -> str:
    """Hand the plan off on a new autonomous thread; returns the thread's id once the turn
    that handed it off has ended."""
    thread = await agent.call("thread/create", {})
    await agent.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    plan = {"goal": "checked", "tasks": tasks}
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/plan " + json.dumps(plan)}
    )
    turn = await agent.run_to_end(run["run_id"])
    assert event_types(turn)[-1] == "run_finished"
    return thread["id"]


async def _tasks(agent: Sidecar, thread_id: str) -> dict[str, dict[str, Any]]:
    plan = (await agent.call("plan/get", {"thread_id": thread_id}))["plans"][-1]
    return {t["id"]: t for t in plan["tasks"]}


async def test_a_rejected_result_goes_back_with_the_verifiers_reason_and_then_passes(
    agent: Sidecar, model: ScriptedModelServer
):
    verdicts = iter(["FAIL\nThe answer does not name the river.", "PASS\nIt names the Fal."])

    def respond(request: RecordedRequest) -> Reply:
        if _is_check(request):
            return Reply.text(answer_text(next(verdicts)))
        if "does not name the river" in _last_user(request):
            return Reply.text(answer_text("The river is the Fal."))
        return Reply.text(answer_text("There is a river."))

    model.push(*[respond] * 4)
    task = {**_task("a"), "success_criteria": "The answer names the river."}
    thread_id = await _run_plan(agent, [task])
    events, report = await _plan_ends(agent, thread_id, "completed")

    done = (await _tasks(agent, thread_id))["a"]
    assert (done["status"], done["attempt"], done["summary"]) == (
        "succeeded",
        2,
        "The river is the Fal.",
    )
    assert "  Findings: The river is the Fal." in report.splitlines()
    requests = model.generation_requests
    # The task, its check, its revision, its check; then the main agent takes the report.
    assert [(_is_check(r), _is_announcement(r)) for r in requests] == [
        (False, False),
        (True, False),
        (False, False),
        (True, False),
        (False, True),
    ]
    # The verifier saw the criteria and the result it judged.
    assert "The answer names the river." in _last_user(requests[1])
    assert "There is a river." in _last_user(requests[1])
    # The second attempt is a continuation of the same session carrying the reasons, not a
    # blind retry: the first answer is still in its history.
    second = requests[2]
    assert "The answer does not name the river." in _last_user(second)
    assert "Fix what the check found" in _last_user(second)
    assert any(
        m["role"] == "assistant" and "There is a river." in str(m["content"])
        for m in second.body["messages"]
    )
    checks = _checks(events)
    assert [(c["attempt"], c["verdict"]) for c in checks] == [
        (1, "running"),
        (1, "fail"),
        (2, "running"),
        (2, "pass"),
    ]
    assert checks[1]["reasons"] == "The answer does not name the river."
    assert {c["method"] for c in checks} == {"model"}


async def test_a_task_its_checker_finds_wrong_fails_at_once_and_the_report_asks_for_a_replan(
    agent: Sidecar, model: ScriptedModelServer
):
    """No revision can pass a task whose criteria contradict its objective: it fails after
    one check (no rounds of revising), and the plan's report asks the main agent to revise
    the plan."""

    def respond(request: RecordedRequest) -> Reply:
        if _is_check(request):
            return Reply.text(answer_text("TASK_WRONG\nIt asks for a river in a desert town."))
        if _is_announcement(request):
            return Reply.text(answer_text("The plan needs changing."))
        return Reply.text(answer_text("There is no river."))

    model.fallback = respond
    task = {**_task("a"), "success_criteria": "The answer names the town's river."}
    thread_id = await _run_plan(agent, [task])
    events, report = await _plan_ends(agent, thread_id, "failed")
    failed = (await _tasks(agent, thread_id))["a"]
    assert (failed["status"], failed["attempt"]) == ("failed", 1)
    assert failed["error"] == (
        "The checker says the task itself is wrong, so the plan must change: It asks for a "
        "river in a desert town."
    )
    assert [c["verdict"] for c in _checks(events)] == ["running", "fail"]
    assert "The checker says task(s) a cannot be done as written: propose a revised plan" in (
        report
    )
    assert sum(_is_check(r) for r in model.generation_requests) == 1


async def test_a_verifier_that_never_answers_fails_the_check_with_a_timeout(
    agent: Sidecar, model: ScriptedModelServer
):
    listed = await agent.call("profile/list")
    verifier = {**listed["profiles"][0], "id": "verifier", "tools_allowed": ["-"], "timeout": 2}
    once = {**listed["profiles"][0], "id": "once", "max_attempts": 1}
    await agent.call("profile/set", {"profiles": [*listed["profiles"], verifier, once]})
    release = threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        return Reply.hang(release) if _is_check(request) else _answers(request)

    model.push(*[respond] * 2)
    try:
        task = {**_task("a", profile="once"), "success_criteria": "Names the river."}
        thread_id = await _run_plan(agent, [task])
        events, report = await _plan_ends(agent, thread_id, "failed", within=120)
    finally:
        release.set()
    failed = (await _tasks(agent, thread_id))["a"]
    assert failed["status"] == "failed"
    assert failed["error"] == (
        "The check of the result failed: the verifier did not answer within 2s"
    )
    assert f"  Error: {failed['error']}" in report.splitlines()
    checks = _checks(events)
    assert [c["verdict"] for c in checks] == ["running", "fail"]
    assert checks[-1]["reasons"] == "the verifier did not answer within 2s"


async def test_a_command_check_runs_in_the_sandbox_and_its_output_is_the_reason(
    agent: Sidecar, model: ScriptedModelServer
):
    def respond(request: RecordedRequest) -> Reply:
        if "2 tests failed" in _last_user(request):
            return Reply.text(answer_text("fixed"))
        return _answers(request)

    model.push(*[respond] * 3)
    failing = {
        **_task("a"),
        "success_criteria": "run: import sys\nsys.exit('2 tests failed')",
    }
    passing = {**_task("b"), "success_criteria": "run: print('all good')"}
    thread_id = await _run_plan(agent, [failing, passing])
    events, _report = await _plan_ends(agent, thread_id, "failed", within=120)
    tasks = await _tasks(agent, thread_id)
    # A command check needs no verifier model: only the two tasks' own requests were made,
    # plus task a's revisions (each again rejected by the same command), and then the main
    # agent's, taking the plan's announcement.
    requests = model.generation_requests
    assert not any(_is_check(r) for r in requests)
    assert [_is_announcement(r) for r in requests] == [False] * 4 + [True]
    assert (tasks["b"]["status"], tasks["b"]["attempt"]) == ("succeeded", 1)
    assert (tasks["a"]["status"], tasks["a"]["attempt"]) == ("failed", 3)
    assert tasks["a"]["error"] == (
        "The check of the result failed: the check command exited with code 1: 2 tests failed"
    )
    checks = [c for c in _checks(events) if c["verdict"] != "running"]
    assert {c["method"] for c in checks} == {"command"}
    assert sorted(c["verdict"] for c in checks) == ["fail", "fail", "fail", "pass"]


async def test_eight_checked_tasks_in_parallel_each_get_their_own_verdicts(
    agent: Sidecar, model: ScriptedModelServer
):
    rejected: set[str] = set()

    def respond(request: RecordedRequest) -> Reply:
        text = _last_user(request)
        if not _is_check(request):
            return _answers(request) if "Task: Task " in text else Reply.text(answer_text("ok"))
        task_id = text.split("Title: Task ", 1)[1].split()[0]
        if int(task_id[1:]) % 2 == 0 and task_id not in rejected:
            rejected.add(task_id)
            return Reply.text(answer_text(f"FAIL\n{task_id} is too short."))
        return Reply.text(answer_text("PASS"))

    model.push(*[respond] * 24)
    tasks = [{**_task(f"t{n}"), "success_criteria": f"t{n} is complete."} for n in range(8)]
    thread_id = await _run_plan(agent, tasks)
    events, _report = await _plan_ends(agent, thread_id, "completed", within=240)
    done = await _tasks(agent, thread_id)
    assert {t["status"] for t in done.values()} == {"succeeded"}
    assert {n: t["attempt"] for n, t in done.items()} == {
        f"t{n}": 2 if n % 2 == 0 else 1 for n in range(8)
    }
    verdicts = [c for c in _checks(events) if c["verdict"] != "running"]
    assert sorted(c["verdict"] for c in verdicts) == ["fail"] * 4 + ["pass"] * 8
    # Each revision was told its own task's reasons, never another task's.
    for request in model.generation_requests:
        text = _last_user(request)
        if "is too short." in text and not _is_check(request):
            assert text.count("is too short.") == 1
    # Twelve task requests and twelve checks, then the main agent's, taking the report.
    assert [_is_announcement(r) for r in model.generation_requests] == [False] * 24 + [True]
