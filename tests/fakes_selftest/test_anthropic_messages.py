"""The Anthropic Messages fake: raw event order, and LiteLLM's Anthropic client parsing it."""

from __future__ import annotations

import json
import urllib.error
from typing import Any

import litellm
import pytest

from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes_selftest.sse import get_json, post_json, post_sse

pytestmark = pytest.mark.filterwarnings(
    "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]


def _complete(server: ScriptedModelServer, **kw: Any) -> Any:
    return litellm.completion(
        model="anthropic/claude-scripted",
        api_base=server.url,
        api_key="x",
        messages=[{"role": "user", "content": "hi"}],
        num_retries=0,
        **kw,
    )


def test_stream_follows_the_real_event_order(scripted_anthropic: ScriptedModelServer) -> None:
    scripted_anthropic.push(Reply.tool_call("lookup", {"q": "moon"}, text="let me look"))
    events = post_sse(
        scripted_anthropic.url + "/v1/messages?beta=true",
        {"model": "claude-x", "stream": True, "messages": [], "max_tokens": 10},
    )
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(name == data["type"] for name, data in events)
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    partial = "".join(
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
    )
    assert json.loads(partial) == {"q": "moon"}
    delta = next(d for n, d in events if n == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert events[0][1]["message"]["model"] == "claude-x"
    assert scripted_anthropic.generation_requests[0].query == {"beta": ["true"]}


def test_litellm_parses_tool_use_and_thinking(scripted_anthropic: ScriptedModelServer) -> None:
    scripted_anthropic.push(Reply.tool_call("lookup", {"q": "x"}, text="hm", reasoning="ponder"))
    message = _complete(scripted_anthropic, tools=TOOLS).choices[0].message
    assert message.content == "hm"
    assert message.reasoning_content == "ponder"
    call = message.tool_calls[0]
    assert call.function.name == "lookup"
    assert json.loads(call.function.arguments) == {"q": "x"}
    assert call.id.startswith("toolu_")


def test_litellm_streams_text(scripted_anthropic: ScriptedModelServer) -> None:
    scripted_anthropic.push(Reply.text("streamed text here", chunk_size=3))
    chunks = list(_complete(scripted_anthropic, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "streamed text here"


def test_error_uses_the_anthropic_envelope(scripted_anthropic: ScriptedModelServer) -> None:
    scripted_anthropic.push(Reply.error(529))
    with pytest.raises(urllib.error.HTTPError) as caught:
        post_json(scripted_anthropic.url + "/v1/messages", {"messages": []})
    assert caught.value.code == 529
    body = json.load(caught.value)
    assert body["type"] == "error"
    assert body["error"]["type"] == "overloaded_error"


def test_token_count_and_models_are_not_generations(
    scripted_anthropic: ScriptedModelServer,
) -> None:
    counted = post_json(
        scripted_anthropic.url + "/v1/messages/count_tokens?beta=true",
        {"model": "m", "messages": [{"role": "user", "content": "hello " * 40}]},
    )
    assert counted["input_tokens"] > 0
    models = get_json(scripted_anthropic.url + "/v1/models")
    assert models["data"][0]["type"] == "model"
    assert scripted_anthropic.generation_requests == []
    assert scripted_anthropic.exhausted == 0
