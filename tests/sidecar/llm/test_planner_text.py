"""The text tool-calling path: a model LiteLLM does not know, so DSPy formats the tools itself."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest

from sidecar.llm.types import ChatTurn, ToolCallRequest
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.sidecar.llm.conftest import TEXT_MODEL, TOOLS, PlannerFactory

pytestmark = pytest.mark.anyio


def text_reply(answer: str = "", calls: list[dict[str, Any]] | None = None) -> str:
    """A reply in DSPy's ChatAdapter format with both output fields."""
    tool_calls = json.dumps({"tool_calls": calls or []})
    return (
        f"[[ ## answer ## ]]\n{answer}\n\n[[ ## tool_calls ## ]]\n{tool_calls}\n\n"
        "[[ ## completed ## ]]"
    )


def test_litellm_does_not_know_the_text_model() -> None:
    assert litellm.supports_function_calling(model=TEXT_MODEL) is False


async def test_tool_calls_written_as_text_become_a_tool_calls_decision(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    calls = [
        {"name": "workspace__write", "args": {"path": "a.md", "text": "hi"}},
        {"name": "workspace__read", "args": {"path": "b.md"}},
    ]
    chat_server.push(Reply.text(text_reply("", calls), chunk_size=7))
    planner = make_planner(TEXT_MODEL)

    decision = await planner.decide([ChatTurn("user", "Write a.md, then read b.md")], TOOLS)

    assert planner.native_tool_calling is False
    assert decision.kind == "tool_calls"
    assert [(c.name, c.arguments) for c in decision.tool_calls] == [
        ("workspace__write", {"path": "a.md", "text": "hi"}),
        ("workspace__read", {"path": "b.md"}),
    ]
    ids = [c.id for c in decision.tool_calls]
    assert all(ids) and len(set(ids)) == 2


async def test_the_text_path_sends_no_tools_parameter_but_describes_the_tools(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.text(text_reply("Hello.")))
    await make_planner(TEXT_MODEL).decide([ChatTurn("user", "hi")], TOOLS)

    body = chat_server.generation_requests[0].body
    assert "tools" not in body
    assert "tool_choice" not in body
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert "workspace__write" in prompt and "workspace__read" in prompt
    assert '"required": ["path", "text"]' in prompt


async def test_a_text_answer_streams_in_pieces_as_the_model_sends_it(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    answer = "Chapter one opens with a storm.\n\nChapter two is still empty."
    chat_server.push(Reply.text(text_reply(answer), chunk_size=32, chunk_delay=0.6))
    tokens: list[str] = []

    async def sink(text: str) -> None:
        tokens.append(text)

    decision = await make_planner(TEXT_MODEL).decide([ChatTurn("user", "Summarise")], TOOLS, sink)

    assert (decision.kind, decision.text, decision.tool_calls) == ("answer", answer, ())
    assert len(tokens) >= 2
    assert "".join(tokens) == answer


async def test_a_reply_with_only_the_answer_field_is_an_answer(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.text("[[ ## answer ## ]]\nJust this.\n\n[[ ## completed ## ]]"))
    decision = await make_planner(TEXT_MODEL).decide([ChatTurn("user", "hi")], TOOLS)
    assert (decision.kind, decision.text) == ("answer", "Just this.")


async def test_history_with_a_tool_result_is_sent_as_text_turns(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    call = ToolCallRequest(id="call_1", name="workspace__read", arguments={"path": "notes.md"})
    history = [
        ChatTurn("user", "What is in chapter 1?"),
        ChatTurn("assistant", "A storm."),
        ChatTurn("user", "Read notes.md"),
        ChatTurn("assistant", "", tool_calls=(call,)),
        ChatTurn("tool", "Buy milk.", tool_call_id="call_1", name="workspace__read"),
    ]
    chat_server.push(Reply.text(text_reply("The notes say: buy milk.")))
    decision = await make_planner(TEXT_MODEL).decide(history, TOOLS)
    assert (decision.kind, decision.text) == ("answer", "The notes say: buy milk.")

    messages: list[dict[str, Any]] = chat_server.generation_requests[0].body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "user",
    ]
    assert all("tool_calls" not in m for m in messages)
    first_answer, call_turn, result_turn = messages[2], messages[4], messages[5]
    assert "A storm." in first_answer["content"]
    assert '{"tool_calls": []}' in first_answer["content"]
    written = call_turn["content"].split("[[ ## tool_calls ## ]]")[1].split("[[ ## completed")[0]
    assert json.loads(written) == {
        "tool_calls": [{"name": "workspace__read", "args": {"path": "notes.md"}}]
    }
    header = "[[ ## tool_call_results ## ]]"
    assert result_turn["content"].startswith(header)
    results = json.loads(result_turn["content"][len(header) :])["tool_call_results"]
    assert [(r["call_id"], r["name"], r["is_error"]) for r in results] == [
        ("call_1", "workspace__read", False)
    ]
    assert results[0]["value"].startswith('<tool_output tool="workspace__read" trust="untrusted">')
    assert "Buy milk." in results[0]["value"]
