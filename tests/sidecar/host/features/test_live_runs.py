"""Live interrupts through the real runtime and graph: server-everything asks for a form or for
sampling while its tool runs in the tool node; `run/resume` answers it mid-run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import FormInterrupt, SamplingInterrupt, ToolProgress, ToolResult
from sidecar.runtime.errors import InvalidResumeValueError, NoSuchInterruptError
from sidecar.runtime.runs import RunManager
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.setup.mcp_everything import Everything
from tests.sidecar.host.features.conftest import SERVER, build_sampler
from tests.sidecar.host.features.live_rig import LiveRig, live_rig
from tests.sidecar.host.features.test_everything_requests import (
    FORM_DEFAULTS,
    raw_result,
    sampling_result,
)
from tests.sidecar.runtime.scripted import answer, call

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FORM_TOOL = "trigger-elicitation-request"


@pytest.fixture
async def runtime(
    tmp_path: Path, everything: Everything, scripted_chat: ScriptedModelServer
) -> AsyncIterator[LiveRig]:
    async for rig in live_rig(tmp_path, everything, build_sampler(scripted_chat)):
        yield rig


async def start_call(rig: LiveRig, tool: str, **arguments: Any) -> tuple[str, str]:
    """Start a turn whose model calls `tool` once (granted for the thread), then answers."""
    thread = rig.store.create_thread("t")
    rig.store.add_grant(thread.id, SERVER, tool)
    rig.planner.script += [call("c1", f"{SERVER}__{tool}", **arguments), answer("done")]
    return thread.id, await rig.runs.start(thread.id, "go")


def tool_result(rig: LiveRig, run_id: str) -> ToolResult:
    [result] = [e.event for e in rig.events if e.run_id == run_id and e.event.type == "tool_result"]
    assert isinstance(result, ToolResult)
    return result


async def test_a_form_is_a_live_interrupt_answered_while_the_turn_runs(runtime: LiveRig) -> None:
    thread_id, run_id = await start_call(runtime, FORM_TOOL)

    form = await runtime.interrupt(run_id)

    assert isinstance(form, FormInterrupt)
    assert (form.live, form.call_id, form.run_id, form.server) == (True, "c1", run_id, SERVER)
    assert runtime.runs.is_busy(thread_id)
    assert [i.id for i in runtime.store.pending_interrupts(thread_id)] == [form.id]
    value = {"action": "accept", "content": {"name": "Ada", "integer": 12}}
    assert await runtime.runs.resume(thread_id, form.id, value) == run_id
    events = await runtime.finish(run_id)
    assert events[-1].event.type == "run_finished"
    filled = {"action": "accept", "content": {**FORM_DEFAULTS, "name": "Ada", "integer": 12}}
    assert raw_result(tool_result(runtime, run_id).content) == filled
    assert runtime.store.pending_interrupts(thread_id) == []
    assert runtime.store.get_thread(thread_id).status == "idle"


async def test_a_form_answer_that_breaks_the_schema_is_refused_and_stays_pending(
    runtime: LiveRig,
) -> None:
    thread_id, run_id = await start_call(runtime, FORM_TOOL)
    form = await runtime.interrupt(run_id)

    with pytest.raises(InvalidResumeValueError):
        await runtime.runs.resume(thread_id, form.id, {"action": "accept", "content": {}})
    with pytest.raises(InvalidResumeValueError):
        await runtime.runs.resume(thread_id, form.id, {"decision": "allow_once"})
    other = runtime.store.create_thread("other")
    with pytest.raises(NoSuchInterruptError):
        await runtime.runs.resume(other.id, form.id, {"action": "decline"})
    assert runtime.live.owns(form.id)

    await runtime.runs.resume(thread_id, form.id, {"action": "decline"})
    await runtime.finish(run_id)
    assert raw_result(tool_result(runtime, run_id).content) == {"action": "decline"}


async def test_cancelling_the_turn_drops_its_pending_form(runtime: LiveRig) -> None:
    thread_id, run_id = await start_call(runtime, FORM_TOOL)
    form = await runtime.interrupt(run_id)

    assert await runtime.runs.cancel(thread_id)

    assert runtime.types(run_id)[-1] == "run_cancelled"
    closed = [e.event for e in runtime.events if e.event.type == "interrupt_closed"]
    assert [c.interrupt_id for c in closed] == [form.id]  # type: ignore[union-attr]
    assert not runtime.live.owns(form.id)
    assert runtime.store.pending_interrupts(thread_id) == []
    with pytest.raises(NoSuchInterruptError):
        await runtime.runs.resume(thread_id, form.id, {"action": "decline"})


async def test_a_long_operation_streams_its_progress_to_the_run(runtime: LiveRig) -> None:
    _, run_id = await start_call(runtime, "trigger-long-running-operation", duration=1, steps=2)
    await runtime.finish(run_id)

    progress = [e.event for e in runtime.events if isinstance(e.event, ToolProgress)]
    assert [(p.call_id, p.progress, p.total) for p in progress] == [
        ("c1", 1.0, 2.0),
        ("c1", 2.0, 2.0),
    ]


async def test_allowed_sampling_is_answered_by_the_model_and_denied_sampling_fails_the_call(
    runtime: LiveRig, scripted_chat: ScriptedModelServer
) -> None:
    scripted_chat.push(Reply.text("A short poem."))
    thread_id, run_id = await start_call(runtime, "trigger-sampling-request", prompt="a poem")
    request = await runtime.interrupt(run_id)
    assert isinstance(request, SamplingInterrupt)
    assert request.live and request.max_tokens == 100
    assert request.system_prompt == "You are a helpful test server."

    await runtime.runs.resume(thread_id, request.id, {"decision": "allow"})
    await runtime.finish(run_id)
    result = tool_result(runtime, run_id)
    assert not result.is_error
    assert sampling_result(result.content)["content"]["text"] == "A short poem."

    runtime.planner.script += [
        call("c2", f"{SERVER}__trigger-sampling-request", prompt="again"),
        answer("done"),
    ]
    second = await runtime.runs.start(thread_id, "again")
    denied = await runtime.interrupt(second)
    await runtime.runs.resume(thread_id, denied.id, {"decision": "deny", "reason": "no"})
    await runtime.finish(second)
    assert tool_result(runtime, second).is_error
    assert len(scripted_chat.generation_requests) == 1


async def test_a_live_interrupt_left_by_a_crash_is_dropped_on_restart(runtime: LiveRig) -> None:
    thread = runtime.store.create_thread("t")
    runtime.store.create_run("r-crashed", thread.id, "start")
    payload = {"kind": "form", "title": "t", "body": "b", "server": SERVER, "message": "m"}
    runtime.store.save_interrupt(
        "i-live", thread.id, "r-crashed", "form", {**payload, "live": True}
    )

    RunManager(runtime.store, runtime.sink, runtime.runs.compiled).recover_after_crash()

    assert runtime.store.pending_interrupts(thread.id) == []
    assert runtime.store.get_thread(thread.id).status == "failed"
