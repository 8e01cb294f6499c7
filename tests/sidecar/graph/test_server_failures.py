"""A server that fails a call never ends the turn in an exception (in process: a real store file
and checkpoints, the real main graph, a scripted planner, and a real stdio server that misbehaves
on purpose, `tests/sidecar/host/unruly_server.py`). Each kind of failure reaches the model as an
`is_error` result with a one-line reason, and the turn goes on to its answer; a `/call` whose tool
failed is stored and shown as a failed call, not restated as a plain answer."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from sidecar.host.host import ServerSpec, ToolHost
from sidecar.protocol import RunEventParams, ToolResult
from sidecar.store import Store, open_database
from tests.sidecar.runtime.conftest import HoldGate, Rig
from tests.sidecar.runtime.scripted import ScriptedPlanner, answer, call
from tests.sidecar.runtime.wiring import wire_runtime

pytestmark = pytest.mark.anyio

UNRULY = str(Path(__file__).parents[1] / "host" / "unruly_server.py")
FAILURES = ["invalid_reply", "wrong_structure", "protocol_error", "crash", "hang"]


def unruly_spec() -> ServerSpec:
    """The unruly server, trusted (its tools are read-only, so they run without asking), with
    a one-second limit per call for `hang`."""
    target = StdioServerParameters(command=sys.executable, args=[UNRULY])
    return ServerSpec("unruly", lambda: target, builtin=False, timeout_s=1.0, transport="stdio")


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    host = ToolHost([unruly_spec()])
    host.start()
    await host.wait_ready()
    planner = ScriptedPlanner([])
    sinks: list[Rig] = []
    wired = wire_runtime(
        store,
        host,
        lambda: planner,
        lambda p: sinks[0].sink(p),  # noqa: PLW0108 - late bound
        tmp_path,
        workspace=tmp_path,
    )
    rig = Rig(db, store, wired.runs, planner, tmp_path, HoldGate())
    sinks.append(rig)
    yield rig
    await wired.aclose()
    await host.aclose()
    db.close()


def results(events: list[RunEventParams]) -> list[ToolResult]:
    return [e.event for e in events if isinstance(e.event, ToolResult)]


@pytest.mark.parametrize("kind", FAILURES)
async def test_the_model_reads_a_failed_call_as_an_error_and_the_turn_answers(rig: Rig, kind: str):
    rig.planner.script = [call("c1", f"unruly__{kind}"), answer("The tool failed.")]
    thread = rig.store.create_thread("t").id
    events = await rig.finish(await rig.runs.start(thread, "Try the tool."))
    assert [e.event.type for e in events][-1] == "run_finished"
    assert events[-1].event.outcome == "completed"  # type: ignore[union-attr]
    [result] = results(events)
    assert result.is_error and result.content and "\n" not in result.content
    stored = rig.store.message("c1:result")
    assert stored is not None and stored.is_error and stored.content == result.content
    seen = rig.planner.seen[-1][-1]  # what the model read before its answer
    assert (seen.role, seen.tool_call_id, seen.content) == ("tool", "c1", result.content)


async def test_a_direct_call_that_failed_is_a_failed_call_not_an_answer(rig: Rig):
    thread = rig.store.create_thread("t").id
    events = await rig.finish(await rig.runs.start(thread, "/call unruly__invalid_reply {}"))
    assert [e.event.type for e in events][-1] == "run_finished"
    [result] = results(events)
    assert result.is_error
    assert "token" not in {e.event.type for e in events}  # nothing streams as an answer
    messages = rig.store.recent_messages(thread, 10)
    [failed] = [m for m in messages if m.role == "tool"]
    assert failed.is_error and failed.content == result.content
    assert not [m for m in messages if m.role == "assistant" and m.content]


async def test_a_direct_call_that_worked_still_answers_with_its_result(rig: Rig):
    thread = rig.store.create_thread("t").id
    events = await rig.finish(await rig.runs.start(thread, "/call unruly__fine {}"))
    [result] = results(events)
    assert not result.is_error
    streamed = "".join(e.event.text for e in events if e.event.type == "token")  # type: ignore[union-attr]
    assert streamed == "fine"
