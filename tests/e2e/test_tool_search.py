"""Tool search through the real sidecar: a real MCP server of 301 tools over stdio (~166 KB of
definitions) and a scripted model. The first request carries the core and
`atrium__tool_search` within a tenth of the model's window; the model searches, and the tool
it found is in its next request and runs after the author's approval. A model naming a
deferred tool directly gets it run, and the thread keeps it loaded across a restart."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.context.tokens import load_counter
from sidecar.protocol import ContextEvent, RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.e2e.many_tools_server import TARGET, tool_names
from tests.e2e.test_servers import is_state, wait_status
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import RecordedRequest, Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = Path(__file__).with_name("many_tools_server.py")
MODEL = "openai/gpt-4o-mini"
WINDOW = 128_000
"""The model's input window in LiteLLM's map, which the sidecar reads."""
FOUND = f"suite__{TARGET}"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def model_env(model: ScriptedModelServer) -> dict[str, str]:
    return {
        "ATRIUM_MODEL": MODEL,
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
    }


def add_suite(data_dir: Path) -> None:
    """The 301-tool server, configured as an author would in `mcp.json`."""
    config = {"mcpServers": {"suite": {"command": sys.executable, "args": [str(SERVER)]}}}
    (data_dir / "mcp.json").write_text(json.dumps(config), encoding="utf-8")


async def start(data_dir: Path, workspace: Path, model: ScriptedModelServer) -> Sidecar:
    """A sidecar with the suite connected (its 301 tools listed)."""
    agent = await Sidecar.start(data_dir, workspace, **model_env(model))
    await wait_status(agent, is_state("suite", "ready"))
    listed = (await agent.call("tool/list"))["tools"]
    assert sum(t["server"] == "suite" for t in listed) == len(tool_names()) == 301
    return agent


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    add_suite(sidecar_data)
    process = await start(sidecar_data, workspace, model)
    yield process
    await process.kill()


def names(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body["tools"]]


def tool_tokens(request: RecordedRequest) -> int:
    """The request's tool definitions in the model's own tokens (tiktoken's o200k)."""
    counter = load_counter(MODEL)
    assert counter.name.startswith("tiktoken:")
    return counter.count(json.dumps(request.body["tools"]))


def context_of(events: list[RunEventParams]) -> ContextEvent:
    return next(e.event for e in events if isinstance(e.event, ContextEvent))


def results(events: list[RunEventParams]) -> list[Any]:
    return [e.event for e in events if e.event.type == "tool_result"]


async def approve(agent: Sidecar, thread_id: str, events: list[RunEventParams]) -> list[Any]:
    """Allow the turn's pending call once; the events of the resumed run."""
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    resumed = await agent.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": interrupt.id, "value": {"decision": "allow_once"}},
    )
    return await agent.run_to_end(resumed["run_id"])


async def test_the_model_searches_and_calls_the_tool_it_found_within_a_tenth_of_its_window(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(
        Reply.tool_call("atrium__tool_search", {"query": "reconcile bank statement"}),
        Reply.tool_call(FOUND, {"statement_month": "2026-09", "account_iban": "DE89"}),
        Reply.text(answer_text("September is reconciled.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "Reconcile September's statement"}
    )
    asked = await agent.run_to_end(run["run_id"])
    assert event_types(asked)[-1] == "run_finished" and "interrupt" in event_types(asked)
    first, second = model.generation_requests[:2]
    assert tool_tokens(first) <= WINDOW // 10
    assert "atrium__tool_search" in names(first) and FOUND not in names(first)
    assert not any(name.startswith("suite__") for name in names(first))
    report = context_of(asked)
    assert report.tools_sent == len(names(first)) and report.tools_deferred >= 301
    [search] = results(asked)
    assert not search.is_error
    assert search.content.splitlines()[1].startswith(f"- {FOUND}(statement_month, account_iban)")
    assert FOUND in names(second) and tool_tokens(second) <= WINDOW // 10

    resumed = await approve(agent, thread["id"], asked)
    assert event_types(resumed)[-1] == "run_finished"
    [ran] = results(resumed)
    assert not ran.is_error
    assert json.loads(ran.content) == {
        "tool": TARGET,
        "arguments": {"statement_month": "2026-09", "account_iban": "DE89"},
    }
    assert FOUND in names(model.generation_requests[2])


async def test_a_deferred_tool_the_model_names_runs_and_stays_loaded_across_a_restart(
    agent: Sidecar, model: ScriptedModelServer, sidecar_data: Path, workspace: Path
):
    assert "create_invoice" in tool_names()
    model.push(
        Reply.tool_call("suite__create_invoice", {"customer_id": "c-7"}),
        Reply.text(answer_text("The invoice is made.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "Invoice c-7"})
    asked = await agent.run_to_end(run["run_id"])
    assert "suite__create_invoice" not in names(model.generation_requests[0])
    resumed = await approve(agent, thread["id"], asked)
    [ran] = results(resumed)
    assert not ran.is_error and json.loads(ran.content)["tool"] == "create_invoice"
    assert "suite__create_invoice" in names(model.generation_requests[1])

    await agent.kill()
    again = await start(sidecar_data, workspace, model)
    try:
        model.push(Reply.text(answer_text("Still here.")))
        run = await again.call("run/start", {"thread_id": thread["id"], "text": "And now?"})
        events = await again.run_to_end(run["run_id"])
        assert event_types(events)[-1] == "run_finished"
        after = names(model.generation_requests[-1])
        assert "suite__create_invoice" in after and "suite__get_invoice" not in after
        assert "atrium__tool_search" in after
    finally:
        await again.kill()
