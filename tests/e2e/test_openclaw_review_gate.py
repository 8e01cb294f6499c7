"""The real OpenClaw behind the review gate, through the real sidecar, offline: a delegated task
writes a file with OpenClaw's own `write` tool in the isolated copy it is given; the file arrives
as a changeset and the workspace stays unchanged until the author accepts it. The task runs in
the background of the thread: the turn that delegates ends at once, the questions are the
background plan run's, and the plan's report comes back as an announcement a turn takes by itself.

OpenClaw's model is the scripted Chat Completions server on 127.0.0.1, reached through Atrium's
model settings (the profile's model, `ATRIUM_MODEL_API_BASE`, `ATRIUM_MODEL_API_KEY`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import InterruptInfo, RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.peers import peer_unavailable
from tests.setup.openclaw import INSTALL_TIMEOUT_S, OpenClawInstall, OpenClawUnavailable
from tests.setup.openclaw import install_openclaw as install

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)]

KEY = "sk-scripted-not-a-real-key"
WITHIN_S = 400.0
ANNOUNCED = "[Background plan "


@pytest.fixture(scope="module")
def openclaw() -> OpenClawInstall:
    try:
        return install()
    except OpenClawUnavailable as exc:
        peer_unavailable(f"OpenClaw {exc}")


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    write = Reply.tool_call("write", {"path": "chapter.md", "content": "# One\n"}, id="call_w1")
    with openai_chat_server([write, Reply.text("wrote chapter.md")]) as server:
        yield server


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def _asked(events: list[RunEventParams], kind: str) -> list[InterruptInfo]:
    return [
        e.event.interrupt  # type: ignore[union-attr]
        for e in events
        if e.event.type == "interrupt" and e.event.interrupt.kind == kind  # type: ignore[union-attr]
    ]


async def _wait_asked(agent: Sidecar, kind: str) -> InterruptInfo:
    await agent.wait_for(lambda evs: len(_asked(evs, kind)) >= 1, within=WITHIN_S)
    return _asked(agent.events, kind)[0]


async def _answer(agent: Sidecar, thread_id: str, asked: InterruptInfo, value: dict[str, Any]):
    params = {"thread_id": thread_id, "interrupt_id": asked.id, "value": value}
    return await agent.call("run/resume", params)


def _finished(events: list[RunEventParams], run_id: str) -> bool:
    return any(e.run_id == run_id and e.event.type == "run_finished" for e in events)


async def _announced(agent: Sidecar, thread_id: str, plan_id: str) -> str:
    """The plan's background run ends by itself (`run_finished`), and its report comes back
    once, as the announcement a turn nobody started takes. Returns the announcement."""
    events = await agent.plan_to_end(thread_id, within=WITHIN_S)
    assert (events[0].event.type, events[-1].event.type) == ("run_started", "run_finished")
    since = next(i for i, e in enumerate(agent.events) if e.run_id == events[0].run_id)

    def new_turns() -> list[str]:
        return [
            e.run_id
            for e in agent.events[since:]
            if e.thread_id == thread_id and not e.background and e.event.type == "run_started"
        ]

    await agent.wait_for(lambda evs: any(_finished(evs, r) for r in new_turns()), WITHIN_S)
    assert len(new_turns()) == 1
    messages = (await agent.call("thread/get", {"thread_id": thread_id}))["messages"]
    [announcement] = [m for m in messages if str(m["content"] or "").startswith(ANNOUNCED)]
    assert announcement["role"] == "user"
    assert announcement["content"].startswith(f"{ANNOUNCED}{plan_id} ended: completed]\n")
    return str(announcement["content"])


async def test_an_openclaw_write_arrives_as_a_changeset_and_lands_only_once_accepted(
    openclaw: OpenClawInstall,
    model: ScriptedModelServer,
    sidecar_data: Path,
    workspace: Path,
) -> None:
    agent = await Sidecar.start(
        sidecar_data,
        workspace,
        ATRIUM_OPENCLAW_BIN=str(openclaw.executable),
        ATRIUM_MODEL_API_BASE=model.url,
        ATRIUM_MODEL_API_KEY=KEY,
    )
    before = _files(workspace)
    try:
        listed = await agent.call("profile/list")
        profile = {"id": "openclaw", "name": "OpenClaw", "kind": "openclaw"}
        profile["model"] = "openai/scripted"
        others = [p for p in listed["profiles"] if p["id"] != "openclaw"]
        await agent.call("profile/set", {"profiles": [*others, profile]})
        thread = await agent.call("thread/create", {})
        text = "/delegate openclaw Write the first chapter"
        run = await agent.call("run/start", {"thread_id": thread["id"], "text": text})

        delegation = await _wait_asked(agent, "approval")
        assert delegation.arguments["agent"] == "OpenClaw"  # type: ignore[union-attr]
        # The turn ended at once; the question is the background plan run's.
        events = await agent.run_to_end(run["run_id"], within=WITHIN_S)
        assert event_types(events)[-1] == "run_finished"
        [started] = [e.event for e in events if e.event.type == "tool_result"]
        plan = (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"][-1]
        assert plan["status"] == "running"
        assert started.content.startswith(f"Plan {plan['id']} is running in the background")  # type: ignore[union-attr]
        [plan_run] = agent.background_runs(thread["id"])
        assert delegation.run_id == plan_run
        await _answer(agent, thread["id"], delegation, {"decision": "allow_once"})

        review = await _wait_asked(agent, "changeset")
        assert review.run_id == plan_run
        files = {f.path: f for f in review.files}  # type: ignore[union-attr]
        assert {p: f.status for p, f in files.items()} == {"chapter.md": "added"}
        assert "+# One\n" in files["chapter.md"].diff
        assert _files(workspace) == before  # OpenClaw wrote; the workspace did not change
        await _answer(agent, thread["id"], review, {"accepted": ["chapter.md"]})
        announcement = await _announced(agent, thread["id"], plan["id"])
        [task] = (await agent.call("plan/get", {"thread_id": thread["id"]}))["plans"][-1]["tasks"]
    finally:
        await agent.kill()

    assert _files(workspace) == {**before, "chapter.md": "# One\n"}
    assert task["status"] == "succeeded"
    assert "Applied to the workspace: chapter.md." in task["summary"]
    assert "Applied to the workspace: chapter.md." in announcement
    [first, _] = model.generation_requests
    assert first.body["model"] == "scripted"
    assert first.headers["authorization"] == f"Bearer {KEY}"
