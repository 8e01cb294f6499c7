"""Progress, elicitation, sampling and roots against the real server-everything, through a
`ToolHost` with `HostFeatures`, over stdio and streamable HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sidecar.binding.calls import current_call
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.sidecar.host.features.conftest import SERVER, FeatureRig, LogWatch

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


FORM_DEFAULTS: dict[str, Any] = {
    "firstLine": "It was a dark and stormy night.",
    "integer": 42,
    "number": 3.14,
    "untitledSingleSelectEnum": "Monica",
    "untitledMultipleSelectEnum": ["Guitar"],
    "titledSingleSelectEnum": "hero-1",
    "titledMultipleSelectEnum": ["fish-1"],
    "legacyTitledEnum": "pet-1",
}
"""The defaults of server-everything's form: the host fills them in for the fields an accepted
answer leaves out (SEP-1034)."""


def raw_result(text: str) -> dict[str, Any]:
    """The elicitation tool's echo of what it received (`Raw result: {json}`)."""
    _, _, raw = text.partition("Raw result:")
    return json.loads(raw)


def sampling_result(text: str) -> dict[str, Any]:
    _, _, raw = text.partition("LLM sampling result:")
    return json.loads(raw)


async def test_long_running_operation_reports_every_step_as_progress(rig: FeatureRig) -> None:
    outcome = await rig.call("trigger-long-running-operation", {"duration": 1, "steps": 4})

    assert not outcome.is_error
    assert rig.progress == [(1.0, 4.0, None), (2.0, 4.0, None), (3.0, 4.0, None), (4.0, 4.0, None)]


async def test_an_accepted_form_reaches_the_server_with_its_content(rig: FeatureRig) -> None:
    content = {
        "name": "Ada Lovelace",
        "check": True,
        "integer": 7,
        "untitledMultipleSelectEnum": ["Piano"],
    }
    rig.author.answers.append({"action": "accept", "content": content})

    outcome = await rig.call("trigger-elicitation-request", {}, call_id="form-1")

    expected = {"action": "accept", "content": {**FORM_DEFAULTS, **content}}
    assert raw_result(outcome.text) == expected
    [asked] = rig.author.asked
    assert asked["kind"] == "form"
    assert asked["server"] == SERVER
    assert asked["call_id"] == "form-1"
    assert asked["requested_schema"]["required"] == ["name"]
    assert asked["requested_schema"]["properties"]["integer"]["default"] == 42


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_form_reaches_the_server_as_such(
    rig: FeatureRig, action: str
) -> None:
    rig.author.answers.append({"action": action})

    outcome = await rig.call("trigger-elicitation-request", {})

    assert raw_result(outcome.text) == {"action": action}


async def test_a_form_outside_any_run_is_cancelled_without_asking(rig: FeatureRig) -> None:
    assert current_call() is None
    outcome = await rig.host.call(f"{SERVER}__trigger-elicitation-request", {})

    assert raw_result(outcome.text) == {"action": "cancel"}
    assert rig.author.asked == []


async def test_an_allowed_sampling_request_is_answered_by_the_configured_model(
    rig: FeatureRig, scripted_chat: ScriptedModelServer
) -> None:
    scripted_chat.push(Reply.text("Rivers run to the sea."))
    rig.author.answers.append({"decision": "allow", "reason": None})

    outcome = await rig.call("trigger-sampling-request", {"prompt": "rivers", "maxTokens": 40})

    assert not outcome.is_error
    result = sampling_result(outcome.text)
    assert result["role"] == "assistant"
    assert result["content"] == {"type": "text", "text": "Rivers run to the sea."}
    [asked] = rig.author.asked
    assert asked["kind"] == "sampling"
    assert asked["system_prompt"] == "You are a helpful test server."
    assert asked["max_tokens"] == 40
    assert asked["messages"][0]["role"] == "user"
    assert "rivers" in asked["messages"][0]["text"]
    [sent] = scripted_chat.generation_requests
    body: dict[str, Any] = sent.body  # type: ignore[assignment]
    assert body["messages"][0] == {"role": "system", "content": "You are a helpful test server."}
    assert body["messages"][1]["role"] == "user"
    assert body["max_completion_tokens"] == 40


async def test_a_denied_sampling_request_fails_the_tool_without_asking_the_model(
    rig: FeatureRig, scripted_chat: ScriptedModelServer
) -> None:
    rig.author.answers.append({"decision": "deny", "reason": "not now"})

    outcome = await rig.call("trigger-sampling-request", {"prompt": "rivers"})

    assert outcome.is_error
    assert scripted_chat.generation_requests == []


async def test_the_server_sees_the_workspace_as_its_root_and_hears_when_it_moves(
    rig: FeatureRig,
) -> None:
    outcome = await rig.call("get-roots-list", {})
    assert rig.workspace.resolve().as_uri() in outcome.text

    moved = rig.workspace.parent / "moved"
    moved.mkdir()
    watch = LogWatch(rig.features)
    try:
        await rig.features.set_workspace(moved)
        sent = await watch.wait_for(lambda e: e.source == "host" and moved.name in e.text)
        await watch.wait_for(lambda e: e.seq > sent.seq and "Roots updated" in e.text)
    finally:
        watch.close()

    outcome = await rig.call("get-roots-list", {})
    assert moved.resolve().as_uri() in outcome.text
    assert rig.workspace.resolve().as_uri() not in outcome.text
