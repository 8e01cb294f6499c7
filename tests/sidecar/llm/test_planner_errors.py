"""Failures become `PlannerError` codes; nothing hangs; cancelling stops the request."""

from __future__ import annotations

import socket
import threading

import anyio
import anyio.to_thread
import pytest

from sidecar.llm import DspyPlanner
from sidecar.llm.planner import aclose_model_clients
from sidecar.llm.types import ChatTurn, LMConfig, PlannerError
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.sidecar.llm.conftest import (
    API_KEY,
    NATIVE_MODEL,
    TEXT_MODEL,
    TOOLS,
    PlannerFactory,
    answer_text,
)

pytestmark = pytest.mark.anyio

HELLO = [ChatTurn("user", "hello")]


async def _ignore_tokens(text: str) -> None:
    del text


async def _error_code(planner: DspyPlanner) -> PlannerError:
    """The error `decide` raises on the streaming path (the author's own turns); loading DSPy
    (seconds, once) is kept out of the time bound."""
    await planner.warm_up()
    with pytest.raises(PlannerError) as caught:
        with anyio.fail_after(10):
            await planner.decide(HELLO, TOOLS, _ignore_tokens)
    return caught.value


async def test_a_server_error_is_a_model_error(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.error(500))
    error = await _error_code(make_planner())
    assert error.code == "model_error"


async def test_a_rejected_key_is_an_auth_error_that_never_repeats_the_key(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {API_KEY}.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    chat_server.push(Reply.error(401, body))
    error = await _error_code(make_planner())
    assert error.code == "auth"
    assert API_KEY not in str(error)
    assert (
        str(error) == "The model provider rejected the API key: check the key in Settings → Model"
    )
    assert error.details is not None and "Incorrect API key provided" in error.details
    assert API_KEY not in error.details


async def test_rate_limiting_and_context_overflow_have_their_own_codes(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    overflow = {
        "error": {
            "message": "This model's maximum context length is 128000 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    chat_server.push(Reply.error(429), Reply.error(400, overflow))
    planner = make_planner()
    assert (await _error_code(planner)).code == "rate_limited"
    assert (await _error_code(planner)).code == "context_window"


async def test_a_refused_connection_is_unreachable(make_planner: PlannerFactory) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    planner = DspyPlanner(
        LMConfig(NATIVE_MODEL, f"http://127.0.0.1:{port}/v1", API_KEY), num_retries=0
    )
    error = await _error_code(planner)
    assert error.code == "unreachable"
    assert "\n" not in str(error) and "Settings → Model" in str(error)
    assert error.details  # the client's own words, for "Details"


async def test_a_dropped_connection_is_unreachable(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.drop())
    assert (await _error_code(make_planner())).code == "unreachable"


async def test_malformed_text_tool_calls_are_bad_output(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    reply = "[[ ## answer ## ]]\n\n[[ ## tool_calls ## ]]\n[oops, not json\n\n[[ ## completed ## ]]"
    chat_server.push(Reply.text(reply))
    assert (await _error_code(make_planner(TEXT_MODEL))).code == "bad_output"


async def test_an_empty_reply_is_bad_output(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.text(""), Reply.text(answer_text("")))
    planner = make_planner()
    assert (await _error_code(planner)).code == "bad_output"
    assert (await _error_code(planner)).code == "bad_output"


async def test_a_server_that_never_answers_times_out(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    release = threading.Event()
    chat_server.push(Reply.text(answer_text("warm")), Reply.hang(release))
    # A first call (without the short deadline: a cold process imports and sets up for seconds)
    # warms LiteLLM's per-process setup, so the deadline falls on the wait itself.
    assert (await make_planner().decide(HELLO, TOOLS)).text == "warm"
    planner = make_planner(timeout_s=0.5)
    await planner.warm_up()
    try:
        error = await _error_code(planner)
    finally:
        release.set()
    assert error.code == "timeout"


async def test_a_transient_server_error_is_retried_when_retries_are_allowed(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    chat_server.push(Reply.error(503, headers={"retry-after": "0"}), Reply.text(answer_text("ok")))
    planner = make_planner(num_retries=1)
    await planner.warm_up()
    with anyio.fail_after(10):
        decision = await planner.decide(HELLO, TOOLS)
    assert decision.text == "ok"
    assert len(chat_server.generation_requests) == 2


async def test_cancelling_mid_stream_closes_the_request_promptly(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    release = threading.Event()
    chat_server.push(Reply.text(answer_text("never seen")).after(release, mid_stream=True))
    planner = make_planner()
    await planner.warm_up()
    tokens: list[str] = []

    async def sink(text: str) -> None:
        tokens.append(text)

    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(planner.decide, HELLO, TOOLS, sink)
                await anyio.to_thread.run_sync(chat_server.wait_for_generations, 1)
                tg.cancel_scope.cancel()
            request = await anyio.to_thread.run_sync(chat_server.disconnects.get, True, 5.0)
    finally:
        release.set()
    assert request.is_generation and request.client_disconnected.is_set()
    assert tokens == []


@pytest.mark.parametrize("model", ["openai/", "nonexistent_provider/some-model"])
async def test_an_unusable_model_string_is_a_model_error(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory, model: str
) -> None:
    planner = make_planner(model)
    with pytest.raises(PlannerError) as caught:
        await planner.warm_up()
        with anyio.fail_after(10):
            await planner.decide(HELLO, TOOLS)
    assert caught.value.code == "model_error"
    assert chat_server.generation_requests == []


async def test_failures_print_nothing_on_stdout_which_carries_protocol_frames(
    chat_server: ScriptedModelServer,
    make_planner: PlannerFactory,
    capfd: pytest.CaptureFixture[str],
) -> None:
    chat_server.push(Reply.error(500), Reply.error(401), Reply.raw(b"{not json", status=200))
    planner = make_planner()
    codes = [(await _error_code(planner)).code for _ in range(3)]
    assert codes == ["model_error", "auth", "cut_off"]  # a 200 that is no stream: cut off
    assert capfd.readouterr().out == ""


async def test_a_stream_cut_off_mid_answer_says_so_not_that_the_model_is_incapable(
    chat_server: ScriptedModelServer, make_planner: PlannerFactory
) -> None:
    text = answer_text("The first part of a long answer. " * 30)
    chat_server.push(Reply.text(text, chunk_size=24, chunk_delay=0.01).cut())
    seen: list[str] = []

    async def collect(token: str) -> None:
        seen.append(token)

    planner = make_planner()
    await planner.warm_up()
    with pytest.raises(PlannerError) as caught:
        with anyio.fail_after(20):
            await planner.decide(HELLO, TOOLS, collect)

    assert caught.value.code == "cut_off"
    assert "capable" not in str(caught.value) and "API base" not in str(caught.value)
    assert "".join(seen).startswith("The first part")


@pytest.mark.parametrize("streaming", [True, False], ids=["author", "subagent"])
async def test_no_key_for_a_hosted_provider_is_named_before_any_request(
    chat_server: ScriptedModelServer, streaming: bool
) -> None:
    planner = DspyPlanner(LMConfig(model=NATIVE_MODEL, api_base=None, api_key=None))
    try:
        await planner.warm_up()
        with pytest.raises(PlannerError) as caught:
            await planner.decide(HELLO, TOOLS, _ignore_tokens if streaming else None)
    finally:
        await aclose_model_clients()

    assert caught.value.code == "no_key"
    assert "model name" not in str(caught.value)
    assert "OPENAI_API_KEY" in (caught.value.details or "")
    assert chat_server.generation_requests == []


async def test_a_server_of_ones_own_needs_no_key(
    chat_server: ScriptedModelServer,
) -> None:
    chat_server.push(Reply.text(answer_text("hello")))
    config = LMConfig(model=NATIVE_MODEL, api_base=chat_server.url + "/v1", api_key=None)
    planner = DspyPlanner(config, num_retries=0)
    try:
        decision = await planner.decide(HELLO, TOOLS, _ignore_tokens)
    finally:
        await aclose_model_clients()
    assert decision.text == "hello"


@pytest.mark.parametrize(("has_key", "expected"), [(False, "no_key"), (True, "auth")])
def test_a_refusal_without_any_key_is_the_missing_key(has_key: bool, expected: str) -> None:
    from dspy.utils.exceptions import LMAuthError

    from sidecar.llm._errors import classify

    assert classify(LMAuthError("refused"), has_key=has_key) == expected


def test_a_missing_credentials_server_error_without_a_key_is_the_missing_key() -> None:
    from dspy.utils.exceptions import LMServerError

    from sidecar.llm._errors import classify

    error = LMServerError("OpenAIException - Missing credentials. Please pass an `api_key`")
    assert classify(error, has_key=False) == "no_key"
    assert classify(error, has_key=True) == "model_error"
