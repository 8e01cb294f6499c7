"""The real sidecar with server-everything plugged in: a form asked mid-call is a live interrupt
answered while the turn runs, progress streams to the window, and the feature methods (logs,
resources, prompts) answer over JSON-RPC."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sidecar.protocol import (
    FeatureErrorCode,
    FormInterrupt,
    InterruptEvent,
    RunEventParams,
    ToolProgress,
    ToolResult,
)
from tests.e2e.harness import RpcFailure, Sidecar
from tests.e2e.test_servers import is_state, statuses, wait_status
from tests.peers import peer_unavailable
from tests.setup.mcp_everything import Everything, EverythingUnavailable, install_everything
from tests.sidecar.host.features.test_everything_requests import FORM_DEFAULTS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = "everything"
DOCUMENT = "demo://resource/static/document/architecture.md"


@pytest.fixture
async def plugged(sidecar: Sidecar) -> AsyncIterator[Sidecar]:
    """The sidecar with server-everything added (trusted) and connected."""
    try:
        everything: Everything = install_everything()
    except EverythingUnavailable as exc:
        peer_unavailable(f"server-everything: {exc}")
    command = everything.stdio_command()
    config = {
        "name": SERVER,
        "command": command[0],
        "args": command[1:],
        "env": {"PATH": everything.env()["PATH"]},
        "trust": "trusted",
    }
    since = len(statuses(sidecar))
    await sidecar.call("server/add", {"config": config})
    await wait_status(sidecar, is_state(SERVER, "ready"), since)
    yield sidecar


async def call_tool(sidecar: Sidecar, thread_id: str, tool: str, arguments: dict[str, Any]) -> str:
    """`/call` the tool, allowing it once if asked; returns the run that makes the call (a
    read-only tool of a trusted server runs at once, in the first run)."""
    text = f"/call {SERVER}__{tool} {json.dumps(arguments)}"
    run = await sidecar.call("run/start", {"thread_id": thread_id, "text": text})
    events = await sidecar.run_to_end(run["run_id"])
    approvals = [
        e.event.interrupt
        for e in events
        if isinstance(e.event, InterruptEvent) and e.event.interrupt.kind == "approval"
    ]
    if not approvals:
        return str(run["run_id"])
    approval = approvals[0]
    resumed = await sidecar.call(
        "run/resume",
        {"thread_id": thread_id, "interrupt_id": approval.id, "value": {"decision": "allow_once"}},
    )
    return str(resumed["run_id"])


def live_interrupt(events: list[RunEventParams], run_id: str) -> FormInterrupt | None:
    for params in events:
        if params.run_id == run_id and isinstance(params.event, InterruptEvent):
            found = params.event.interrupt
            if isinstance(found, FormInterrupt):
                return found
    return None


def tool_result(events: list[RunEventParams]) -> ToolResult:
    return next(e.event for e in events if isinstance(e.event, ToolResult))


async def test_a_form_asked_mid_call_is_answered_while_the_turn_runs(plugged: Sidecar) -> None:
    thread = await plugged.call("thread/create", {})
    run_id = await call_tool(plugged, thread["id"], "trigger-elicitation-request", {})
    await plugged.wait_for(lambda events: live_interrupt(events, run_id) is not None)
    form = live_interrupt(plugged.events, run_id)
    assert form is not None and form.live and form.server == SERVER
    assert "name" in form.requested_schema["properties"]

    listed = await plugged.call("thread/get", {"thread_id": thread["id"]})
    assert listed["status"] == "running"
    assert [i["id"] for i in listed["interrupts"]] == [form.id]

    value = {"action": "accept", "content": {"name": "Ada Lovelace", "check": True}}
    resumed = await plugged.call(
        "run/resume", {"thread_id": thread["id"], "interrupt_id": form.id, "value": value}
    )
    assert resumed["run_id"] == run_id
    events = await plugged.run_to_end(run_id)
    assert events[-1].event.type == "run_finished"
    _, _, raw = tool_result(events).content.partition("Raw result:")
    assert json.loads(raw) == {"action": "accept", "content": {**FORM_DEFAULTS, **value["content"]}}


async def test_a_long_operation_streams_progress_to_the_window(plugged: Sidecar) -> None:
    thread = await plugged.call("thread/create", {})
    arguments = {"duration": 1, "steps": 3}
    run_id = await call_tool(plugged, thread["id"], "trigger-long-running-operation", arguments)
    events = await plugged.run_to_end(run_id)

    progress = [e.event for e in events if isinstance(e.event, ToolProgress)]
    assert [(p.progress, p.total) for p in progress] == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
    assert not tool_result(events).is_error


async def test_logs_resources_and_prompts_answer_over_json_rpc(plugged: Sidecar) -> None:
    level = await plugged.call("server_log/set_level", {"server": SERVER, "level": "debug"})
    assert level == {"server": SERVER, "level": "debug", "applied": "now"}
    logs = await plugged.call("server_log/list", {"server": SERVER})
    assert logs["level"] == "debug"

    listed = await plugged.call("resource/list", {"server": SERVER})
    assert DOCUMENT in {r["uri"] for r in listed["resources"]}
    attached = await plugged.call("resource/attach", {"server": SERVER, "uri": DOCUMENT})
    assert attached["text"].startswith(f'<resource server="{SERVER}"')

    prompts = await plugged.call("prompt/list", {"server": SERVER})
    assert "/everything:args-prompt" in {p["command"] for p in prompts["prompts"]}
    got = await plugged.call(
        "prompt/get", {"server": SERVER, "name": "args-prompt", "arguments": {"city": "Oslo"}}
    )
    assert "Oslo" in got["text"]

    with pytest.raises(RpcFailure) as refused:
        await plugged.call("resource/read", {"server": "nowhere", "uri": DOCUMENT})
    assert refused.value.code == FeatureErrorCode.SERVER_UNAVAILABLE
