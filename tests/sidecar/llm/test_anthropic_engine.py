"""`anthropic/` models stream through the coalescing Anthropic engine: the text is exact however
the bytes are cut, tool calls, usage and errors arrive as DSPy's LiteLLM engine would hand them
over, and cancelling hangs up on the model."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.to_thread
import pytest
from dspy import lm15

from sidecar.llm import DspyPlanner, aclose_model_clients
from sidecar.llm._anthropic_engine import (  # pyright: ignore[reportPrivateUsage]
    CoalescingAnthropicEngine,
    messages_base_url,
)
from sidecar.llm.types import ChatTurn, LMConfig, PlannerError, ToolCallRequest
from tests.fakes.anthropic_messages import anthropic_server
from tests.fakes.model_server import Reply, ScriptedModelServer, ToolCall
from tests.sidecar.llm.conftest import API_KEY, TOOLS, WRITE_TOOL, answer_text

pytestmark = pytest.mark.anyio

MODEL = "anthropic/claude-sonnet-4-6"
PIECES = ["Grüße ", "😀", " 日本語", "\r\n", "tab\tend", "é", "\u200d✓", " [1] ", "\n\n"]
HELLO = [ChatTurn("user", "hello")]
TOO_LONG = {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens"}


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with anthropic_server() as scripted:
        yield scripted


@pytest.fixture
async def planner(server: ScriptedModelServer) -> AsyncIterator[DspyPlanner]:
    config = LMConfig(model=MODEL, api_base=server.url, api_key=API_KEY)
    yield DspyPlanner(config, num_retries=0, timeout_s=20.0)
    await aclose_model_clients()


class Tokens:
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def __call__(self, text: str) -> None:
        self.texts.append(text)


def _sse(kind: str, data: dict[str, Any], line_end: str = "\n") -> bytes:
    payload = json.dumps({"type": kind, **data}, ensure_ascii=False)
    return f"event: {kind}{line_end}data: {payload}{line_end}{line_end}".encode()


def _body(pieces: list[str], line_end: str = "\n", *, end: bool = True) -> bytes:
    usage = {"input_tokens": 12, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "usage": usage}
    block = {"index": 0, "content_block": {"type": "text", "text": ""}}
    events = [
        ("message_start", {"message": {**message, "content": []}}),
        ("ping", {}),
        ("content_block_start", block),
        *(
            ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
            for p in pieces
        ),
    ]
    if end:
        events += [
            ("content_block_stop", {"index": 0}),
            (
                "message_delta",
                {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
            ),
            ("message_stop", {}),
        ]
    return b"".join(_sse(kind, data, line_end) for kind, data in events)


async def _cut(data: bytes, step: int) -> AsyncIterator[bytes]:
    for i in range(0, len(data), step):
        yield data[i : i + step]


async def _events(data: bytes, step: int) -> list[Any]:
    engine = CoalescingAnthropicEngine(api_key="x", api_base="http://127.0.0.1:9", timeout_s=5)
    request = lm15.Request(model="m", messages=(lm15.Message.user("hi"),))
    try:
        return [e async for e in engine._events(request, _cut(data, step))]  # pyright: ignore[reportPrivateUsage]
    finally:
        await engine.aclose()


def _text(events: list[Any]) -> str:
    return "".join(e.delta.text for e in events if e.type == "delta" and e.delta.type == "text")


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
async def test_text_is_exact_however_the_bytes_are_cut(step: int, line_end: str) -> None:
    assert _text(await _events(_body(PIECES, line_end), step)) == "".join(PIECES)


async def test_deltas_read_together_become_one_text_event() -> None:
    pieces = [f"{i} " for i in range(5000)]
    events = await _events(_body(pieces), 1 << 20)
    texts = [e for e in events if e.type == "delta"]
    assert len(texts) == 1 and texts[0].delta.text == "".join(pieces)


async def test_the_prompt_s_token_count_reaches_the_end_event() -> None:
    events = await _events(_body(["a"]), 1 << 20)
    [end] = [e for e in events if e.type == "end" and e.usage is not None]
    assert end.finish_reason == "stop"
    assert (end.usage.input_tokens, end.usage.output_tokens) == (12, 9)


async def test_a_malformed_event_is_an_error() -> None:
    with pytest.raises(lm15.ProviderError):
        await _events(_body(["ok"]) + b"data: {not json\n\n", 5)


def test_the_messages_address_is_the_one_litellm_would_use() -> None:
    assert messages_base_url("http://h:1") == "http://h:1/v1"
    assert messages_base_url("http://h:1/") == "http://h:1/v1"
    assert messages_base_url("http://h:1/v1/messages") == "http://h:1/v1"
    assert messages_base_url("https://proxy/anthropic") == "https://proxy/anthropic/v1"


async def test_a_fast_unicode_answer_streams_exactly_in_few_pieces(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    answer = "Ünïcödé 😀 and 日本語,\nline two,\n\nand the end. " * 20
    answer = answer.strip()
    server.push(Reply.text(answer_text(answer), chunk_size=1))
    tokens = Tokens()

    decision = await planner.decide(HELLO, TOOLS, tokens)

    assert decision.kind == "answer" and decision.text == answer
    assert "".join(tokens.texts) == answer
    assert len(tokens.texts) < len(answer) / 4
    assert server.generation_requests[0].path == "/v1/messages"


async def test_a_tool_call_arrives_with_its_arguments_usage_and_id(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    arguments = {"path": "notes/ä.md", "text": "line 1\r\nline 2 😀" * 40, "overwrite": True}
    server.push(
        Reply(
            content=answer_text("Writing it."),
            calls=(ToolCall("workspace__write", arguments, id="toolu_01"),),
            usage={"input_tokens": 321, "output_tokens": 54},
            chunk_size=3,
        )
    )

    decision = await planner.decide([ChatTurn("user", "Write it")], TOOLS, Tokens())

    assert planner.native_tool_calling is True
    assert decision.kind == "tool_calls" and decision.text == "Writing it."
    assert decision.tool_calls == (
        ToolCallRequest(id="toolu_01", name="workspace__write", arguments=arguments),
    )
    assert decision.usage == {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375}
    body = server.generation_requests[0].body
    assert body["stream"] is True
    tools = {t["name"]: t for t in body["tools"]}
    assert tools["workspace__write"]["input_schema"] == WRITE_TOOL.input_schema


async def test_system_prompt_and_tool_results_are_sent_as_litellm_sends_them(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    read = ToolCallRequest(id="toolu_r", name="workspace__read", arguments={"path": "a.md"})
    history = [
        ChatTurn("system", "Be brief."),
        ChatTurn("user", "Read a.md"),
        ChatTurn("assistant", "", tool_calls=(read,)),
        ChatTurn("tool", "# A", tool_call_id="toolu_r", name="workspace__read"),
    ]
    server.push(Reply.text(answer_text("It says A.")))

    decision = await planner.decide(history, TOOLS, Tokens())

    assert decision.text == "It says A."
    body = server.generation_requests[0].body
    assert "Be brief." in body["system"]
    assert body["max_tokens"] > 16384  # LiteLLM's figure for the model, not lm15's default
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]  # the tool result and the prompt: one turn
    [call] = body["messages"][1]["content"]
    assert call == {
        "type": "tool_use",
        "id": "toolu_r",
        "name": "workspace__read",
        "input": {"path": "a.md"},
    }
    result, prompt = body["messages"][2]["content"]
    assert (result["type"], result["tool_use_id"]) == ("tool_result", "toolu_r")
    assert "# A" in result["content"] and prompt["type"] == "text"


async def test_parallel_tool_calls_keep_their_order(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    server.push(
        Reply.tool_calls(
            [
                ToolCall("workspace__read", {"path": "a.md"}, id="toolu_a"),
                ToolCall("workspace__read", {"path": "b.md"}, id="toolu_b"),
            ]
        )
    )
    decision = await planner.decide(HELLO, TOOLS, Tokens())
    assert [(c.id, c.arguments["path"]) for c in decision.tool_calls] == [
        ("toolu_a", "a.md"),
        ("toolu_b", "b.md"),
    ]


async def test_without_a_token_sink_the_reply_comes_whole_through_litellm(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    server.push(Reply.text(answer_text("whole")))
    decision = await planner.decide(HELLO, TOOLS)
    assert decision.text == "whole"
    assert not server.generation_requests[0].body.get("stream")


async def _error(planner: DspyPlanner) -> PlannerError:
    await planner.warm_up()
    with pytest.raises(PlannerError) as caught:
        with anyio.fail_after(10):
            await planner.decide(HELLO, TOOLS, Tokens())
    return caught.value


async def test_a_rejected_key_is_the_one_line_auth_error(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    server.push(Reply.error(401))
    error = await _error(planner)
    assert error.code == "auth"
    assert (
        str(error) == "The model provider rejected the API key: check the key in Settings → Model"
    )
    assert API_KEY not in (error.details or "")


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Reply.error(429), "rate_limited"),
        (Reply.error(529), "model_error"),
        (Reply.error(400, {"type": "error", "error": TOO_LONG}), "context_window"),
        (Reply.drop(), "unreachable"),
    ],
)
async def test_http_failures_have_the_codes_litellm_s_path_gives(
    server: ScriptedModelServer, planner: DspyPlanner, reply: Reply, code: str
) -> None:
    server.push(reply)
    assert (await _error(planner)).code == code


async def test_an_error_event_mid_stream_is_an_error(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    overloaded = {"error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = _body(["Hel"], end=False) + _sse("error", overloaded)
    server.push(Reply.raw(body, content_type="text/event-stream"))
    assert (await _error(planner)).code == "model_error"


async def test_a_refused_connection_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    planner = DspyPlanner(LMConfig(MODEL, f"http://127.0.0.1:{port}", API_KEY), num_retries=0)
    try:
        assert (await _error(planner)).code == "unreachable"
    finally:
        await aclose_model_clients()


async def test_a_server_that_never_answers_times_out(server: ScriptedModelServer) -> None:
    release = threading.Event()
    server.push(Reply.hang(release))
    planner = DspyPlanner(LMConfig(MODEL, server.url, API_KEY), num_retries=0, timeout_s=0.5)
    try:
        assert (await _error(planner)).code == "timeout"
    finally:
        release.set()
        await aclose_model_clients()


async def test_cancelling_mid_stream_hangs_up_on_the_model(
    server: ScriptedModelServer, planner: DspyPlanner
) -> None:
    release = threading.Event()
    server.push(Reply.text(answer_text("never seen")).after(release, mid_stream=True))
    await planner.warm_up()
    tokens = Tokens()
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(planner.decide, HELLO, TOOLS, tokens)
                await anyio.to_thread.run_sync(server.wait_for_generations, 1)
                tg.cancel_scope.cancel()
            request = await anyio.to_thread.run_sync(server.disconnects.get, True, 5.0)
    finally:
        release.set()
    assert request.is_generation and request.client_disconnected.is_set()
    assert tokens.texts == []
