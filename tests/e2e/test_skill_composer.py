"""The Skill Composer through the real sidecar and a scripted model: `/skill new` hands the
conversation (or a plan) to the `skill-composer` profile with no planning call; its answer is a
SKILL.md draft, checked against the skills catalog's rules, then put to the author as a
changeset. Accepted, the skill lands and `skills__list` lists it; rejected, nothing lands; a
draft with bad frontmatter goes back to the composer with the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.protocol import InterruptInfo, RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_subagents import _plan, _start, agent, model
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
__all__ = ["agent", "model"]  # the sidecar and scripted model fixtures of test_subagents

DRAFT = (
    "---\nname: harbour-report\n"
    "description: Use to write the harbour report from the day's tide table.\n---\n"
    "# Steps\n1. Read the tide table.\n2. Write the report, high water first.\n"
)
NO_DESCRIPTION = "---\nname: harbour-report\n---\n# Steps\n1. Read the tide table.\n"


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


async def _compose(agent: Sidecar, thread_id: str, text: str) -> tuple[str, InterruptInfo]:
    seen = len(_changesets(agent.events))
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    await agent.wait_for(lambda evs: len(_changesets(evs)) > seen, within=180)
    return run["run_id"], _changesets(agent.events)[seen]


async def _answer(
    agent: Sidecar, thread_id: str, run_id: str, asked: InterruptInfo, accepted: list[str]
) -> list[RunEventParams]:
    params = {"thread_id": thread_id, "interrupt_id": asked.id, "value": {"accepted": accepted}}
    await agent.call("run/resume", params)
    return list(await agent.run_to_end(run_id, within=180))


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

    run_id, asked = await _compose(agent, thread_id, "/skill new harbour-report")

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

    events = await _answer(agent, thread_id, run_id, asked, ["harbour-report/SKILL.md"])

    assert event_types(events)[-1] == "run_finished"
    assert (skills / "harbour-report" / "SKILL.md").read_text() == DRAFT
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["status"] == "succeeded" and "Saved the skill harbour-report" in task["summary"]
    listed = await _skills_list(agent, thread_id)
    assert "- harbour-report: Use to write the harbour report from the day's tide table." in listed


async def test_a_rejected_draft_from_a_finished_plan_leaves_no_skill(
    agent: Sidecar, model: ScriptedModelServer, sidecar_data: Path, workspace: Path
) -> None:
    model.push(Reply.text(answer_text("High water 06:12, low water 12:30.")))
    thread = await agent.call("thread/create", {})
    thread_id = thread["id"]
    run = await agent.call(
        "run/start", {"thread_id": thread_id, "text": "/delegate general List the tides"}
    )
    await agent.run_to_end(run["run_id"], within=120)
    plan_id = (await _plan(agent, thread_id))["id"]
    model.push(Reply.text(answer_text(DRAFT)))
    before = len(model.generation_requests)

    run_id, asked = await _compose(
        agent, thread_id, f"/skill new harbour-report from plan {plan_id} to account"
    )
    prompt = json.dumps(model.generation_requests[before].body["messages"])
    assert "Objective: List the tides" in prompt and "Result: High water 06:12" in prompt
    assert asked.workspace == str(sidecar_data / "skills")  # type: ignore[union-attr]
    events = await _answer(agent, thread_id, run_id, asked, [])

    assert event_types(events)[-1] == "run_finished"
    assert not (sidecar_data / "skills" / "harbour-report").exists()
    assert not (workspace / ".agents" / "skills").exists()
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["profile"] == "skill-composer" and "was not saved" in task["summary"]
    assert "harbour-report" not in await _skills_list(agent, thread_id)
    assert not list((sidecar_data / "runs").glob("*/*/skill"))  # the staging folder is gone


async def test_a_draft_with_bad_frontmatter_goes_back_with_the_errors(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    thread_id = await _talk(agent, model)
    model.push(Reply.text(answer_text(NO_DESCRIPTION)), Reply.text(answer_text(DRAFT)))
    before = len(model.generation_requests)

    run_id, asked = await _compose(agent, thread_id, "/skill new harbour-report")

    first, second = model.generation_requests[before:]
    assert "frontmatter has no description" not in json.dumps(first.body["messages"])
    assert "frontmatter has no description" in json.dumps(second.body["messages"])
    [change] = asked.files  # type: ignore[union-attr]
    assert "+description: Use to write the harbour report" in change.diff  # only the fixed one
    await _answer(agent, thread_id, run_id, asked, ["harbour-report/SKILL.md"])
    text = (workspace / ".agents" / "skills" / "harbour-report" / "SKILL.md").read_text()
    assert text == DRAFT
    [task] = (await _plan(agent, thread_id))["tasks"]
    assert task["attempt"] == 2


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


async def test_a_draft_under_review_when_the_sidecar_dies_is_offered_again_without_redrafting(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    agent = await _start(sidecar_data, workspace, model)
    try:
        thread_id = await _talk(agent, model)
        model.push(Reply.text(answer_text(DRAFT)))
        await _compose(agent, thread_id, "/skill new harbour-report")
        drafted = len(model.generation_requests)
    finally:
        await agent.kill()

    agent = await _start(sidecar_data, workspace, model)
    try:
        retried = await agent.call("run/retry", {"thread_id": thread_id})
        await agent.wait_for(lambda evs: len(_changesets(evs)) >= 1, within=180)
        [asked] = _changesets(agent.events)
        assert len(model.generation_requests) == drafted  # the kept draft, not a new one
        await _answer(agent, thread_id, retried["run_id"], asked, ["harbour-report/SKILL.md"])
        text = (workspace / ".agents" / "skills" / "harbour-report" / "SKILL.md").read_text()
        assert text == DRAFT
        assert not list((sidecar_data / "runs").glob("*/*/skill-draft.md"))
    finally:
        await agent.kill()
