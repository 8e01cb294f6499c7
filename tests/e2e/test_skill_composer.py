"""The Skill Composer through the real sidecar and a scripted model: `/skill new` hands the
conversation (or a plan) to the `skill-composer` profile with no planning call; its answer is a
SKILL.md draft, checked against the skills catalog's rules, then put to the author as a
changeset. Accepted, the skill lands and `skills__list` lists it; rejected, nothing lands; a
draft with bad frontmatter goes back to the composer with the errors.

The composer works in the background of the thread: the turn that hands it the work ends at
once (its call's result says the plan runs in the background), the changeset is a question of
the thread's background plan run, and the plan's report comes back as an announcement that a
turn of the main agent takes by itself (it asks the model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import InterruptInfo, RunEventParams
from tests.e2e.harness import RpcFailure, Sidecar, event_types
from tests.e2e.test_sidecar_model import model_env
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAST = {"ATRIUM_COORD_BACKOFF": "0.01"}
DRAFT = (
    "---\nname: harbour-report\n"
    "description: Use to write the harbour report from the day's tide table.\n---\n"
    "# Steps\n1. Read the tide table.\n2. Write the report, high water first.\n"
)
NO_DESCRIPTION = "---\nname: harbour-report\n---\n# Steps\n1. Read the tide table.\n"
ANNOUNCED = "[Background plan "
TOLD = "The skill is ready for you."


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
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


def _changesets(events: list[RunEventParams]) -> list[InterruptInfo]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt" and e.event.interrupt.kind == "changeset"  # type: ignore[union-attr]
    ]


async def _talk(agent: Sidecar, model: ScriptedModelServer) -> str:
    """A short conversation the skill is made from."""
    model.push(Reply.text(answer_text("Read the tide table, then write high water first.")))
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "How do I write the harbour report?"}
    )
    await agent.run_to_end(run["run_id"], within=120)
    return thread["id"]


async def _handed_off(agent: Sidecar, thread_id: str, run_id: str) -> str:
    """The turn that delegated ends by itself while its plan runs on: its call's result says
    the plan runs in the background. Returns the plan's id."""
    events = await agent.run_to_end(run_id, within=180)
    assert event_types(events)[-1] == "run_finished"
    [result] = [e.event for e in events if e.event.type == "tool_result"]
    plan = await _plan(agent, thread_id)
    assert result.content.startswith(f"Plan {plan['id']} is running in the background")  # type: ignore[union-attr]
    return plan["id"]


async def _compose(agent: Sidecar, thread_id: str, text: str) -> tuple[str, InterruptInfo]:
    """Start the composer; returns its plan's id and the changeset its draft is put in."""
    seen = len(_changesets(agent.events))
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    plan_id = await _handed_off(agent, thread_id, run["run_id"])
    await agent.wait_for(lambda evs: len(_changesets(evs)) > seen, within=180)
    asked = _changesets(agent.events)[seen]
    assert asked.run_id == agent.background_runs(thread_id)[-1]  # the plan's run asks
    return plan_id, asked


async def _announced(
    agent: Sidecar, thread_id: str, plan_id: str, status: str, *, skip: int = 0
) -> str:
    """The thread's background plan run number `skip` ends by itself (`run_finished`), and
    the plan's report comes back once, as the announcement a turn nobody started takes: the
    main agent answers it (TOLD, pushed beforehand). Returns the announcement."""
    events = await agent.plan_to_end(thread_id, skip=skip, within=180)
    assert (events[0].event.type, events[-1].event.type) == ("run_started", "run_finished")
    since = next(i for i, e in enumerate(agent.events) if e.run_id == events[0].run_id)

    def new_turns() -> list[str]:
        return [
            e.run_id
            for e in agent.events[since:]
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
        ]

    def ended(evs: list[RunEventParams]) -> bool:
        return any(e.run_id in new_turns() and e.event.type == "run_finished" for e in evs)

    await agent.wait_for(ended, within=180)
    assert len(new_turns()) == 1
    messages = (await agent.call("thread/get", {"thread_id": thread_id}))["messages"]
    head = f"{ANNOUNCED}{plan_id} ended: {status}]\n"
    [announcement] = [m for m in messages if str(m["content"] or "").startswith(head)]
    assert announcement["role"] == "user"
    assert messages[-1]["content"] == TOLD
    return str(announcement["content"])


async def _answer(
    agent: Sidecar,
    model: ScriptedModelServer,
    thread_id: str,
    asked: InterruptInfo,
    accepted: list[str],
) -> None:
    """Answer the changeset; the main agent's answer to the announcement is pushed first."""
    model.push(Reply.text(answer_text(TOLD)))
    params = {"thread_id": thread_id, "interrupt_id": asked.id, "value": {"accepted": accepted}}
    resumed = await agent.call("run/resume", params)
    assert resumed["run_id"] == asked.run_id


def _told(model: ScriptedModelServer, text: str) -> None:
    """The announcement's turn asked the model once, its prompt holding the report line."""
    [request] = [
        r for r in model.generation_requests if ANNOUNCED in json.dumps(r.body["messages"])
    ]
    assert text in json.dumps(request.body["messages"])


async def _skills_list(agent: Sidecar, thread_id: str) -> str:
    """What `skills__list` answers: one `- name: description` line per skill."""
    run = await agent.call("run/start", {"thread_id": thread_id, "text": "/call skills__list {}"})
    events = await agent.run_to_end(run["run_id"], within=120)
    [result] = [e.event for e in events if e.event.type == "tool_result"]
    return str(result.content)  # type: ignore[union-attr]


async def test_an_accepted_draft_lands_in_the_workspace_and_is_listed(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    thread_id = await _talk(agent, model)
    model.push(Reply.text(answer_text(DRAFT)))
    before = len(model.generation_requests)

    plan_id, asked = await _compose(agent, thread_id, "/skill new harbour-report")

    [request] = model.generation_requests[before:]  # the composer's only: no planning call
    prompt = json.dumps(request.body["messages"])
    assert "Compose the skill 'harbour-report'" in prompt
    assert "How do I write the harbour report?" in prompt
    assert "high water first" in prompt
    assert asked.agent == "Skill Composer"  # type: ignore[union-attr]
    [change] = asked.files  # type: ignore[union-attr]
    assert (change.path, change.status) == ("harbour-report/SKILL.md", "added")
    assert "+description: Use to write the harbour report" in change.diff
    skills = workspace / ".agents" / "skills"
    assert not (skills / "harbour-report").exists()  # nothing lands before the author says so

    await _answer(agent, model, thread_id, asked, ["harbour-report/SKILL.md"])
    announcement = await _announced(agent, thread_id, plan_id, "completed")

    assert (skills / "harbour-report" / "SKILL.md").read_text() == DRAFT
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["status"] == "succeeded" and "Saved the skill harbour-report" in task["summary"]
    assert "Saved the skill harbour-report" in announcement
    _told(model, "Saved the skill harbour-report")
    listed = await _skills_list(agent, thread_id)
    assert "- harbour-report: Use to write the harbour report from the day's tide table." in listed


async def test_a_rejected_draft_from_a_finished_plan_leaves_no_skill(
    agent: Sidecar, model: ScriptedModelServer, sidecar_data: Path, workspace: Path
) -> None:
    model.push(
        Reply.text(answer_text("High water 06:12, low water 12:30.")),
        Reply.text(answer_text(TOLD)),
    )
    thread = await agent.call("thread/create", {})
    thread_id = thread["id"]
    run = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general List the tides"}
    )
    plan_id = await _handed_off(agent, thread_id, run["run_id"])
    tides = await _announced(agent, thread_id, plan_id, "completed")
    assert "High water 06:12" in tides
    model.push(Reply.text(answer_text(DRAFT)))
    before = len(model.generation_requests)

    composing, asked = await _compose(
        agent, thread_id, f"/skill new harbour-report from plan {plan_id} to account"
    )
    prompt = json.dumps(model.generation_requests[before].body["messages"])
    assert "Objective: List the tides" in prompt and "Result: High water 06:12" in prompt
    assert asked.workspace == str(sidecar_data / "skills")  # type: ignore[union-attr]
    await _answer(agent, model, thread_id, asked, [])
    announcement = await _announced(agent, thread_id, composing, "completed", skip=1)

    assert not (sidecar_data / "skills" / "harbour-report").exists()
    assert not (workspace / ".agents" / "skills").exists()
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["profile"] == "skill-composer" and "was not saved" in task["summary"]
    assert "was not saved" in announcement
    assert "harbour-report" not in await _skills_list(agent, thread_id)
    assert not list((sidecar_data / "runs").glob("*/*/skill"))  # the staging folder is gone


async def test_a_draft_with_bad_frontmatter_goes_back_with_the_errors(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    thread_id = await _talk(agent, model)
    model.push(Reply.text(answer_text(NO_DESCRIPTION)), Reply.text(answer_text(DRAFT)))
    before = len(model.generation_requests)

    plan_id, asked = await _compose(agent, thread_id, "/skill new harbour-report")

    first, second = model.generation_requests[before:]
    assert "frontmatter has no description" not in json.dumps(first.body["messages"])
    assert "frontmatter has no description" in json.dumps(second.body["messages"])
    [change] = asked.files  # type: ignore[union-attr]
    assert "+description: Use to write the harbour report" in change.diff  # only the fixed one
    await _answer(agent, model, thread_id, asked, ["harbour-report/SKILL.md"])
    announcement = await _announced(agent, thread_id, plan_id, "completed")
    text = (workspace / ".agents" / "skills" / "harbour-report" / "SKILL.md").read_text()
    assert text == DRAFT
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["attempt"] == 2
    assert "2 attempt(s)" in announcement


async def test_a_skill_command_for_a_missing_plan_answers_without_a_model_call(
    agent: Sidecar, model: ScriptedModelServer
) -> None:
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "/skill new tides from plan plan-none"}
    )
    events = await agent.run_to_end(run["run_id"], within=120)
    texts = [
        e.event.message.content  # type: ignore[union-attr]
        for e in events
        if e.event.type == "message" and e.event.message.role == "assistant"  # type: ignore[union-attr]
    ]
    assert any("no plan 'plan-none'" in t for t in texts)
    assert model.generation_requests == []
    assert agent.background_runs(thread["id"]) == []


async def test_a_draft_under_review_when_the_sidecar_dies_is_offered_again_without_redrafting(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await _start(sidecar_data, workspace, model)
    try:
        thread_id = await _talk(agent, model)
        model.push(Reply.text(answer_text(DRAFT)))
        plan_id, _asked = await _compose(agent, thread_id, "/skill new harbour-report")
        drafted = len(model.generation_requests)
    finally:
        await agent.kill()

    agent = await _start(sidecar_data, workspace, model)
    try:
        # Nobody retries: the plan the crash left running is taken up at start-up, in a
        # background run of its own, and offers the kept draft again.
        await agent.wait_for(lambda evs: len(_changesets(evs)) >= 1, within=180)
        [asked] = _changesets(agent.events)
        assert asked.run_id == agent.background_runs(thread_id)[0]
        assert agent.turns(thread_id) == []
        assert len(model.generation_requests) == drafted  # the kept draft, not a new one
        # The turn that handed it off had ended before the crash: there is no turn to retry.
        with pytest.raises(RpcFailure, match="no unfinished turn"):
            await agent.call("run/retry", {"thread_id": thread_id})
        await _answer(agent, model, thread_id, asked, ["harbour-report/SKILL.md"])
        await _announced(agent, thread_id, plan_id, "completed")
        text = (workspace / ".agents" / "skills" / "harbour-report" / "SKILL.md").read_text()
        assert text == DRAFT
        assert not list((sidecar_data / "runs").glob("*/*/skill-draft.md"))
    finally:
        await agent.kill()
