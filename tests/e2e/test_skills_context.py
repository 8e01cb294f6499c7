"""Progressive disclosure through the real sidecar and a scripted model that logs prompts: a
skill's name and description are in the prompt and its body is not, until the model loads it;
with 1,000 skills the listing keeps to its budget and the `context` event names what it left out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Sidecar, event_types
from tests.e2e.test_sidecar_model import model, model_env
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.mcp_servers.skills.conftest import write_skill

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
__all__ = ["model"]  # the scripted OpenAI-compatible model fixture

BODY = "# Harbour report\nAlways start from the tide table of the port, then the berths."


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    yield process
    await process.kill()


def _prompt(model: ScriptedModelServer, index: int) -> str:
    return json.dumps(model.generation_requests[index].body["messages"])


async def _turn(agent: Sidecar, thread_id: str, text: str) -> list[Any]:
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    return list(await agent.run_to_end(run["run_id"], within=120))


async def test_the_body_enters_the_prompt_only_after_the_model_loads_the_skill(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    write_skill(
        workspace / ".agents" / "skills",
        "harbour-report",
        "Use when the author asks for a harbour report.",
        body=BODY,
    )
    model.push(
        Reply.text(answer_text("Noted.")),
        Reply.tool_call("skills__load", {"name": "harbour-report"}),
        Reply.text(answer_text("Starting from the tide table.")),
    )
    thread = await agent.call("thread/create", {})

    first = await _turn(agent, thread["id"], "What can you do?")
    second = await _turn(agent, thread["id"], "Write the harbour report.")

    assert event_types(first)[-1] == "run_finished" and event_types(second)[-1] == "run_finished"
    assert "harbour-report: Use when the author asks for a harbour report." in _prompt(model, 0)
    assert "tide table of the port" not in _prompt(model, 0)
    assert "tide table of the port" not in _prompt(model, 1)
    assert "tide table of the port" in _prompt(model, 2)


async def test_a_thousand_skills_keep_to_the_listing_budget_and_the_rest_are_named(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
) -> None:
    root = workspace / ".agents" / "skills"
    for i in range(1000):
        write_skill(root, f"skill-{i:04d}", f"Use for chore number {i}, " + "tidy " * 40)
    model.push(Reply.text(answer_text("Noted.")))
    thread = await agent.call("thread/create", {})

    events = await _turn(agent, thread["id"], "Hello")

    [context] = [e.event for e in events if e.event.type == "context"]
    items = [i for i in context.items if i.kind == "skills"]
    listing = [i for i in items if i.included]
    left = [i for i in items if not i.included]
    assert len(listing) == 1, (context.warnings, [(i.kind, i.label[:60]) for i in context.items])
    assert listing[0].tokens <= context.budget * 0.02 + 64
    assert left and "over the listing budget" in left[0].reason
    assert "skill-0999" in left[0].label or "more" in left[0].label
    prompt = _prompt(model, 0)
    assert "skill-0000" in prompt and "skill-0999" not in prompt
