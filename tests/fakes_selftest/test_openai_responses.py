"""The Responses fake: raw event order, and LiteLLM's Responses client (OpenAI types) parsing it."""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest

from tests.fakes.model_server import Reply, ScriptedModelServer, ToolCall
from tests.fakes_selftest.sse import get_json, post_sse

pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)

TOOL: dict[str, Any] = {
    "type": "function",
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}


def _respond(server: ScriptedModelServer, **kw: Any) -> Any:
    return litellm.responses(
        model="openai/scripted", api_base=server.url + "/v1", api_key="x", input="hi", **kw
    )


def test_stream_numbers_events_and_ends_completed(scripted_responses: ScriptedModelServer) -> None:
    scripted_responses.push(Reply.text("hello there", chunk_size=4))
    events = post_sse(scripted_responses.url + "/v1/responses", {"model": "m", "stream": True})
    kinds = [data["type"] for _, data in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-1] == "response.completed"
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    text = "".join(d["delta"] for _, d in events if d["type"] == "response.output_text.delta")
    assert text == "hello there"
    final = events[-1][1]["response"]
    assert final["usage"]["total_tokens"] > 0
    assert final["id"] == events[0][1]["response"]["id"]


def test_namespaced_mcp_call_keeps_namespace(scripted_responses: ScriptedModelServer) -> None:
    scripted_responses.push(Reply.tool_call("add", {"a": 2}, namespace="mcp__own", id="call_7"))
    events = post_sse(scripted_responses.url + "/v1/responses", {"model": "m", "stream": True})
    done = [d["item"] for _, d in events if d["type"] == "response.output_item.done"]
    assert done == [
        {
            "id": done[0]["id"],
            "type": "function_call",
            "status": "completed",
            "arguments": '{"a": 2}',
            "call_id": "call_7",
            "name": "add",
            "namespace": "mcp__own",
        }
    ]


def test_litellm_reads_non_streaming_text(scripted_responses: ScriptedModelServer) -> None:
    scripted_responses.push(Reply.text("resp text"))
    output = _respond(scripted_responses).output
    assert output[0].type == "message"
    assert output[0].content[0].text == "resp text"


def test_streamed_call_arguments_reassemble(scripted_responses: ScriptedModelServer) -> None:
    # Raw SSE here: LiteLLM's sync Responses streaming leaks an event loop (ResourceWarning at
    # session end). Codex itself parses this stream in the slow CLI tests.
    scripted_responses.push(Reply.tool_calls([ToolCall("lookup", {"q": "y" * 30})]))
    events = post_sse(
        scripted_responses.url + "/v1/responses", {"model": "m", "stream": True, "tools": [TOOL]}
    )
    deltas = [
        d["delta"] for _, d in events if d["type"] == "response.function_call_arguments.delta"
    ]
    assert len(deltas) > 1
    assert json.loads("".join(deltas)) == {"q": "y" * 30}
    call = events[-1][1]["response"]["output"][0]
    assert (call["type"], call["name"]) == ("function_call", "lookup")
    assert call["call_id"].startswith("call_")
    assert scripted_responses.generation_requests[0].body["tools"][0]["name"] == "lookup"


def test_models_listing(scripted_responses: ScriptedModelServer) -> None:
    assert get_json(scripted_responses.url + "/v1/models")["data"][0]["id"] == "scripted"
