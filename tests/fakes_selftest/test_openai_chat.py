"""The Chat Completions fake, driven by LiteLLM (the client DSPy uses)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

import litellm
import pytest

from tests.fakes.model_server import Reply, ScriptedModelServer, ToolCall

# LiteLLM 1.106 types trip a pydantic UserWarning on import of its response types.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look something up.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]


def _complete(server: ScriptedModelServer, **kw: Any) -> Any:
    return litellm.completion(
        model="openai/scripted",
        api_base=server.url + "/v1",
        api_key="x",
        messages=[{"role": "user", "content": "hello"}],
        num_retries=0,
        **kw,
    )


def test_non_streaming_text_reply_reaches_litellm(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(Reply.text("hello there"))
    response = _complete(scripted_chat)
    assert response.choices[0].message.content == "hello there"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.total_tokens > 0
    sent = scripted_chat.generation_requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "scripted"
    assert sent.body["messages"] == [{"role": "user", "content": "hello"}]


def test_non_streaming_tool_call_has_parsed_function(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(Reply.tool_call("lookup", {"query": "moon"}, id="call_1"))
    response = _complete(scripted_chat, tools=TOOLS)
    call = response.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name) == ("call_1", "lookup")
    assert json.loads(call.function.arguments) == {"query": "moon"}
    assert response.choices[0].finish_reason == "tool_calls"
    assert scripted_chat.generation_requests[0].body["tools"][0]["function"]["name"] == "lookup"


def test_streamed_text_arrives_in_several_deltas(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(Reply.text("a fairly long streamed answer", chunk_size=4))
    chunks = list(_complete(scripted_chat, stream=True, stream_options={"include_usage": True}))
    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert len(pieces) > 3
    assert "".join(pieces) == "a fairly long streamed answer"
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].completion_tokens > 0


def test_streamed_tool_call_deltas_reassemble(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(
        Reply.tool_calls(
            [ToolCall("lookup", {"query": "sun and moon"}), ToolCall("lookup", {"query": "x"})],
            text="checking",
        )
    )
    chunks = list(_complete(scripted_chat, stream=True, tools=TOOLS))
    rebuilt = litellm.stream_chunk_builder(chunks)
    assert rebuilt is not None
    message = rebuilt.choices[0].message
    assert message.content == "checking"
    calls = message.tool_calls
    assert [c.function.name for c in calls] == ["lookup", "lookup"]
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"query": "sun and moon"},
        {"query": "x"},
    ]
    assert all(c.id.startswith("call_") for c in calls)
    assert rebuilt.choices[0].finish_reason == "tool_calls"


def test_scripted_error_status_surfaces_as_litellm_exception(
    scripted_chat: ScriptedModelServer,
) -> None:
    scripted_chat.push(Reply.error(429))
    with pytest.raises(litellm.RateLimitError):
        _complete(scripted_chat)


def test_unauthorised_error_maps_to_authentication_error(
    scripted_chat: ScriptedModelServer,
) -> None:
    scripted_chat.push(Reply.error(401))
    with pytest.raises(litellm.AuthenticationError):
        _complete(scripted_chat)


def test_script_order_then_fallback(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(
        Reply.text("one"), lambda req: Reply.text(req.body["messages"][0]["content"])
    )
    assert _complete(scripted_chat).choices[0].message.content == "one"
    assert _complete(scripted_chat).choices[0].message.content == "hello"
    assert _complete(scripted_chat).choices[0].message.content == "ok"
    assert scripted_chat.exhausted == 1


def test_models_endpoint_lists_scripted_model(scripted_chat: ScriptedModelServer) -> None:
    with urllib.request.urlopen(scripted_chat.url + "/v1/models", timeout=5) as resp:
        listing = json.load(resp)
    assert listing["object"] == "list"
    assert listing["data"][0]["id"] == "scripted"
    assert scripted_chat.paths == ["GET /v1/models"]


def test_hanging_reply_notices_client_disconnect(scripted_chat: ScriptedModelServer) -> None:
    release = threading.Event()
    scripted_chat.push(Reply.hang(release))
    with pytest.raises(litellm.Timeout):
        _complete(scripted_chat, timeout=0.5)
    abandoned = scripted_chat.disconnects.get(timeout=5)
    assert abandoned.is_generation
    release.set()


def test_gated_reply_answers_once_released(scripted_chat: ScriptedModelServer) -> None:
    release = threading.Event()
    scripted_chat.push(Reply.text("late").after(release, mid_stream=True))
    result: list[str] = []

    def consume() -> None:
        chunks = list(_complete(scripted_chat, stream=True))
        result.append("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))

    worker = threading.Thread(target=consume)
    worker.start()
    scripted_chat.wait_for_generations(1)
    assert not result
    release.set()
    worker.join(10)
    assert result == ["late"]


def test_paced_stream_spreads_chunks_over_time(scripted_chat: ScriptedModelServer) -> None:
    scripted_chat.push(Reply.text("abcdefgh", chunk_size=2, chunk_delay=0.05))
    arrivals: list[float] = []
    for chunk in _complete(scripted_chat, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic())
    assert len(arrivals) == 4
    assert arrivals[-1] - arrivals[0] >= 0.1
