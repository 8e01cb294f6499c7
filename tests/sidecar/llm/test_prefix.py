"""The settled history, rendered once per exchange and spliced in by the engine: the request the
model receives is byte for byte the one DSPy would have sent, on every path, and a new turn
renders only the exchanges that are new."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

import pytest

from sidecar.llm import DspyPlanner, aclose_model_clients
from sidecar.llm._prefix import RENDERED
from sidecar.llm.types import ChatTurn, LMConfig, ToolCallRequest
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server
from tests.sidecar.llm.conftest import API_KEY, NATIVE_MODEL, TEXT_MODEL, TOOLS, answer_text

pytestmark = pytest.mark.anyio

ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-6"

EARLIER = [
    ChatTurn("system", "From the author's file AGENTS.md: be brief."),
    ChatTurn("user", "[Context kept by Atrium for this conversation]\n\n- a memory"),
    ChatTurn("user", "What is in notes.md? ünïcode ✓"),
    ChatTurn("assistant", "It says:\n\n- the river is wide\n- [[ not a marker ]]"),
    ChatTurn("user", "And the other file?"),
    ChatTurn("user", "(sent again while the turn failed)"),
    ChatTurn("assistant", "There is no other file."),
    ChatTurn("assistant", "An answer after an answer."),
    ChatTurn("user", "Thanks."),
    ChatTurn("assistant", "You're welcome."),
]
READ = ToolCallRequest(id="call_1", name="workspace__read", arguments={"path": "a.md"})
PENDING = [*EARLIER, ChatTurn("user", "Now read a.md")]
AFTER_TOOLS = [
    *PENDING,
    ChatTurn("assistant", "", tool_calls=(READ,)),
    ChatTurn("tool", "contents of a.md", tool_call_id="call_1", name="workspace__read"),
]
HISTORIES = {"pending": PENDING, "after_tools": AFTER_TOOLS, "answered": EARLIER}


@pytest.fixture
def anthropic() -> Iterator[ScriptedModelServer]:
    with anthropic_server() as server:
        yield server


@pytest.fixture
def openai() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:  # pyright: ignore[reportUnusedFunction]
    yield
    await aclose_model_clients()


async def _planners(model: str, base: str) -> tuple[DspyPlanner, DspyPlanner]:
    """A planner that splices and one that leaves the whole history to DSPy."""
    config = LMConfig(model=model, api_base=base, api_key=API_KEY)
    splicing = DspyPlanner(config, num_retries=0, timeout_s=20.0)
    plain = DspyPlanner(config, num_retries=0, timeout_s=20.0)
    await splicing.warm_up()
    await plain.warm_up()
    program = plain._program  # pyright: ignore[reportPrivateUsage]
    assert program is not None and program.splices
    plain._program = replace(program, splices=False)  # pyright: ignore[reportPrivateUsage]
    return splicing, plain


async def _tokens(text: str) -> None:
    del text


async def _bodies(
    server: ScriptedModelServer, model: str, base: str, history: list[ChatTurn], streamed: bool
) -> tuple[bytes, bytes]:
    splicing, plain = await _planners(model, base)
    server.push(Reply.text(answer_text("one")), Reply.text(answer_text("two")))
    sink = _tokens if streamed else None
    first = await splicing.decide(history, TOOLS, sink)
    second = await plain.decide(history, TOOLS, sink)
    assert first.text == "one" and second.text == "two"
    spliced, whole = server.generation_requests[-2:]
    return spliced.raw, whole.raw


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("history", list(HISTORIES), ids=list(HISTORIES))
@pytest.mark.parametrize("model", [NATIVE_MODEL, TEXT_MODEL], ids=["native", "text"])
async def test_an_openai_request_is_the_one_dspy_would_send(
    openai: ScriptedModelServer, model: str, history: str, streamed: bool
) -> None:
    spliced, whole = await _bodies(openai, model, openai.url + "/v1", HISTORIES[history], streamed)
    assert spliced == whole


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("history", list(HISTORIES), ids=list(HISTORIES))
async def test_an_anthropic_request_is_the_one_dspy_would_send(
    anthropic: ScriptedModelServer, history: str, streamed: bool
) -> None:
    spliced, whole = await _bodies(
        anthropic, ANTHROPIC_MODEL, anthropic.url, HISTORIES[history], streamed
    )
    assert spliced == whole


async def test_a_new_turn_renders_only_its_new_exchanges(openai: ScriptedModelServer) -> None:
    planner, _ = await _planners(NATIVE_MODEL, openai.url + "/v1")
    turns = [ChatTurn("user", "question 0"), ChatTurn("assistant", "answer 0")]
    for i in range(1, 30):
        turns += [ChatTurn("user", f"question {i}"), ChatTurn("assistant", f"answer {i}")]
    openai.push(*(Reply.text(answer_text("ok")) for _ in range(3)))

    await planner.decide([*turns, ChatTurn("user", "next")], TOOLS, _tokens)
    before = RENDERED.renders
    await planner.decide([*turns, ChatTurn("user", "next")], TOOLS, _tokens)
    again = RENDERED.renders - before
    turns += [ChatTurn("user", "next"), ChatTurn("assistant", "ok")]
    await planner.decide([*turns, ChatTurn("user", "and then")], TOOLS, _tokens)
    grown = RENDERED.renders - before - again

    assert again == 0  # the same window: nothing rendered again
    assert grown == 1  # one more exchange: one rendering
    sent = openai.generation_requests[-1].body["messages"]
    assert len(sent) == 1 + 2 * 31 + 1  # the system prompt, every exchange, the new message
