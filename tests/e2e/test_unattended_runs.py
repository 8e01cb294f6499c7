"""The real sidecar with a scripted model on 127.0.0.1: a scheduled run whose model calls a tool
that needs approval, while nobody is there to answer. Per its schedule's policy the run waits
and the author is notified; ends skipped with the tool never run; or is denied at its deadline,
which a restart of the sidecar keeps (the sidecar comes back with its clock past the deadline
and declines at once), and the model's next request shows the denial."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import InterruptEvent, RunCancelled, RunFinished
from tests.e2e.harness import Sidecar
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

WRITE = {"path": "report.md", "content": "the night report\n"}
YEARLY = "0 3 1 1 *"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def model_env(model: ScriptedModelServer, **extra: str) -> dict[str, str]:
    return {
        "ATRIUM_MODEL": "openai/gpt-4o-mini",
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
        "TZ": "UTC",
        **extra,
    }


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    yield process
    await process.kill()


def notes(sidecar: Sidecar) -> list[dict[str, Any]]:
    return [m["params"] for m in sidecar.raw if m.get("method") == "automation/notify"]


async def scheduled_run(sidecar: Sidecar, policy: dict[str, Any]) -> tuple[str, str, str]:
    """Create a schedule with `policy` and run it now; (schedule id, run id, thread id)."""
    created = await sidecar.call(
        "schedule/create",
        {"kind": "cron", "spec": YEARLY, "prompt": "write the night report", "unattended": policy},
    )
    assert created["unattended"] == {"minutes": 30, **policy}
    started = await sidecar.call("schedule/run_now", {"schedule_id": created["id"]})
    assert started["run_id"]
    return created["id"], started["run_id"], started["thread_id"]


async def fire_of(sidecar: Sidecar, schedule_id: str) -> dict[str, Any]:
    [fire] = (await sidecar.call("schedule/history", {"schedule_id": schedule_id}))["fires"]
    return fire


async def test_wait_keeps_the_approval_pending_and_notifies_the_author(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    model.push(Reply.tool_call("workspace__write", WRITE))
    schedule_id, run_id, thread_id = await scheduled_run(agent, {"action": "wait"})

    events = await agent.run_to_end(run_id, within=180)
    asked = [e.event.interrupt for e in events if isinstance(e.event, InterruptEvent)]
    assert [(i.kind, i.tool) for i in asked] == [("approval", "write")]  # type: ignore[union-attr]
    assert isinstance(events[-1].event, RunFinished) and events[-1].event.outcome == "interrupted"
    await agent.wait_for(lambda _: bool(notes(agent)))
    assert [(n["kind"], n["text"], n["thread_id"]) for n in notes(agent)] == [
        ("schedule", "A scheduled run needs an answer.", thread_id)
    ]
    pending = (await agent.call("thread/get", {"thread_id": thread_id}))["interrupts"]
    assert [i["id"] for i in pending] == [asked[0].id]
    fire = await fire_of(agent, schedule_id)
    assert (fire["status"], fire["reason"]) == ("waiting", "the run waits on an answer")
    assert not (workspace / "report.md").exists()


async def test_skip_ends_the_run_at_its_first_question_and_the_tool_never_runs(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    model.push(Reply.tool_call("workspace__write", WRITE))
    schedule_id, run_id, thread_id = await scheduled_run(agent, {"action": "skip"})

    events = await agent.run_to_end(run_id, within=180)
    assert isinstance(events[-1].event, RunCancelled)
    assert not any(isinstance(e.event, InterruptEvent) for e in events)
    await agent.wait_for(lambda _: bool(notes(agent)))
    assert [(n["kind"], n["text"]) for n in notes(agent)] == [
        ("schedule", "Skipped: it needed an answer and nobody was there.")
    ]
    fire = await fire_of(agent, schedule_id)
    assert (fire["status"], fire["reason"]) == (
        "skipped",
        "it needed an answer and nobody was there",
    )
    got = await agent.call("thread/get", {"thread_id": thread_id})
    assert got["interrupts"] == [] and got["thread"]["status"] == "cancelled"
    assert len(model.generation_requests) == 1
    assert not (workspace / "report.md").exists()


async def test_deny_after_outlasts_a_restart_and_the_model_is_told_of_the_denial(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> None:
    model.push(Reply.tool_call("workspace__write", WRITE))
    first = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    try:
        schedule_id, run_id, thread_id = await scheduled_run(
            first, {"action": "deny_after", "minutes": 5}
        )
        await first.run_to_end(run_id, within=180)
        await first.wait_for(lambda _: bool(notes(first)))
        [note] = notes(first)
        assert note["text"].startswith("A scheduled run needs an answer. Unanswered by ")
        fire = await fire_of(first, schedule_id)
        assert fire["status"] == "waiting" and fire["reason"].endswith("; then it is declined")
    finally:
        await first.kill()

    model.push(Reply.text(answer_text("Nobody approved the write; the report is not filed.")))
    # Back ten minutes later (its clock shifted; nobody sleeps): the deadline, five minutes
    # after the question, has passed, so the question is declined at once, not in 5 minutes.
    later = await Sidecar.start(
        sidecar_data, workspace, **model_env(model, ATRIUM_CLOCK_OFFSET="600")
    )
    try:

        def completed(_events: object) -> bool:
            return any(
                e.thread_id == thread_id
                and isinstance(e.event, RunFinished)
                and e.event.outcome == "completed"
                for e in later.events
            )

        await later.wait_for(completed, within=180)
        told = json.dumps(model.generation_requests[1].body["messages"])
        assert "The author denied this call." in told
        assert "nobody answered within 5 minutes (an unattended scheduled run)" in told
        got = await later.call("thread/get", {"thread_id": thread_id})
        assert got["interrupts"] == []
        assert got["messages"][-1]["content"] == (
            "Nobody approved the write; the report is not filed."
        )
        fire = await fire_of(later, schedule_id)
        assert fire["status"] == "finished"
        assert fire["reason"].startswith("a question nobody answered was declined at ")
        assert not (workspace / "report.md").exists()
    finally:
        await later.kill()
