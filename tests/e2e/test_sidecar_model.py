"""The real sidecar with a model: DSPy → LiteLLM → a scripted OpenAI-compatible server on
127.0.0.1. Streaming, tool calls, approvals, cancel, kill and model errors."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from sidecar.protocol import RunEventParams
from tests.e2e.harness import Sidecar, event_types
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def model_env(model: ScriptedModelServer) -> dict[str, str]:
    return {
        "ATRIUM_MODEL": "openai/gpt-4o-mini",
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
    }


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    result = await process.call("initialize", {"client_name": "tests"})
    assert result["model_configured"] is True
    yield process
    await process.kill()


async def test_the_model_reads_a_file_and_its_answer_streams_in_tokens(
    agent: Sidecar, model: ScriptedModelServer
):
    answer = "Your notes say the river is wide, and that is all they say."
    model.push(
        Reply.tool_call("workspace__read", {"path": "notes.md"}),
        # Pauses far longer than the coalescing window: the answer arrives in several events.
        Reply.text(answer_text(answer), chunk_size=24, chunk_delay=0.6),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "What do my notes say?"}
    )
    events = await agent.run_to_end(run["run_id"])
    types = event_types(events)
    assert types[-1] == "run_finished" and "interrupt" not in types
    assert [e.seq for e in events] == list(range(len(events)))
    tokens = [e.event.text for e in events if e.event.type == "token"]  # type: ignore[union-attr]
    assert len(tokens) > 1 and "".join(tokens).strip() == answer
    first, second = model.generation_requests[:2]
    assert any(t["function"]["name"] == "workspace__read" for t in first.body["tools"])
    assert any(m.get("role") == "tool" for m in second.body["messages"])
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["messages"][-1]["role"] == "assistant"
    assert got["messages"][-1]["content"].strip() == answer


async def test_a_model_write_waits_for_the_author_and_then_lands(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    model.push(
        Reply.tool_call("workspace__write", {"path": "ch1.md", "content": "It began.\n"}),
        Reply.text("Chapter one is written."),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "Start chapter one"})
    events = await agent.run_to_end(run["run_id"])
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    assert interrupt.tool == "write" and "+It began." in (interrupt.diff or "")
    assert model.pending == 1
    resumed = await agent.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": interrupt.id,
            "value": {"decision": "allow_once"},
        },
    )
    assert event_types(await agent.run_to_end(resumed["run_id"]))[-1] == "run_finished"
    assert (workspace / "ch1.md").read_text() == "It began.\n"


async def test_cancel_stops_a_turn_waiting_on_the_model(agent: Sidecar, model: ScriptedModelServer):
    release = threading.Event()
    model.push(Reply.hang(release))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "think hard"})
    await agent.wait_for(
        lambda evs: any(e.event.type == "node_started" and e.event.node == "planner" for e in evs)
    )  # type: ignore[union-attr]
    model.wait_for_generations(1)
    # A message for the busy thread is queued, not refused; withdrawn, it never runs.
    queued = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "again", "mode": "followup"}
    )
    assert queued["run_id"] == run["run_id"] and queued["queued_id"]
    await agent.call(
        "queue/withdraw", {"thread_id": thread["id"], "message_id": queued["queued_id"]}
    )
    await agent.call("run/cancel", {"thread_id": thread["id"]})
    events = await agent.run_to_end(run["run_id"])
    assert event_types(events)[-1] == "run_cancelled"
    release.set()
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["status"] == "cancelled"
    model.push(Reply.text("Here I am."))
    retried = await agent.call("run/retry", {"thread_id": thread["id"]})
    assert event_types(await agent.run_to_end(retried["run_id"]))[-1] == "run_finished"


async def test_a_model_error_fails_the_run_and_is_recorded_on_the_thread(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(Reply.error(500), Reply.error(500), Reply.error(500))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "hello"})
    events = await agent.run_to_end(run["run_id"])
    failed = events[-1].event
    assert failed.type == "run_failed"
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["status"] == "failed" and got["last_error"]


async def test_a_sidecar_killed_mid_turn_leaves_the_thread_resumable(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(
        Reply.tool_call("workspace__read", {"path": "notes.md"}),
        Reply.hang(release),
    )
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    thread = await process.call("thread/create", {})
    await process.call("run/start", {"thread_id": thread["id"], "text": "read and think"})
    model.wait_for_generations(2, timeout=60)
    await process.kill()
    release.set()

    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    try:
        got = await process.call("thread/get", {"thread_id": thread["id"]})
        assert got["status"] == "failed"
        calls = [c["id"] for m in got["messages"] for c in m["tool_calls"]]
        answered = {m["tool_call_id"] for m in got["messages"] if m["role"] == "tool"}
        assert calls and set(calls) <= answered
        model.push(Reply.text(answer_text("The river is wide.")))
        run = await process.call("run/retry", {"thread_id": thread["id"]})
        assert event_types(await process.run_to_end(run["run_id"]))[-1] == "run_finished"
        got = await process.call("thread/get", {"thread_id": thread["id"]})
        assert got["status"] == "idle"
        assert got["messages"][-1]["content"].strip() == "The river is wide."
    finally:
        await process.kill()


async def test_a_sidecar_asked_to_stop_right_after_start_exits_within_the_desktops_wait(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
):
    # The model warm-up is still loading in a worker thread; the desktop waits 3 s for the
    # sidecar to exit before it kills it, so the sidecar must not wait for that thread.
    from desktop.app import SHUTDOWN_TIMEOUT_MS

    servers = {"mcpServers": {"time": {"command": "mcp-server-time"}}}
    (sidecar_data / "mcp.json").write_text(json.dumps(servers), encoding="utf-8")
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    try:
        await process.call("initialize", {"client_name": "tests"})
        await process.call("shutdown")
        assert process.proc.stdin is not None
        process.proc.stdin.close()
        async with asyncio.timeout(SHUTDOWN_TIMEOUT_MS / 1000):
            assert await process.proc.wait() == 0
    finally:
        await process.kill()


ANSWERED_AT_ONCE = 100


async def test_an_approval_answered_the_instant_it_arrives_always_resumes_the_turn(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    # One turn asks for an approval-needing write again and again; each question is answered
    # from the frame reader, as the window's auto-answering could, before anything else runs.
    model.push(
        *(
            Reply.tool_call("workspace__write", {"path": "ch1.md", "content": f"draft {n}\n"})
            for n in range(ANSWERED_AT_ONCE)
        ),
        Reply.text("All drafts are written."),
    )
    thread = await agent.call("thread/create", {})
    replies: list[asyncio.Future[dict[str, object]]] = []

    def answer_at_once(event: RunEventParams) -> None:
        if event.event.type == "interrupt":
            value = {"decision": "allow_once"}
            params = {"thread_id": thread["id"], "interrupt_id": event.event.interrupt.id}
            replies.append(agent.request("run/resume", {**params, "value": value}))

    agent.on_event = answer_at_once
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "Draft it"})
    await agent.wait_for(
        lambda evs: any(
            e.event.type == "run_finished" and e.event.outcome == "completed" for e in evs
        ),
        within=240,
    )
    answers = [await reply for reply in replies]
    assert [a.get("error") for a in answers] == [None] * ANSWERED_AT_ONCE
    run_ids = [run["run_id"], *(a["result"]["run_id"] for a in answers)]  # type: ignore[index]
    assert len(set(run_ids)) == ANSWERED_AT_ONCE + 1
    assert (workspace / "ch1.md").read_text() == f"draft {ANSWERED_AT_ONCE - 1}\n"


LITELLM_LOADING = b"importing LiteLLM"
WARMED_UP = b"start-up heap frozen"


@pytest.mark.slow
@pytest.mark.parametrize(
    "when", ["with_initialize", "after_initialize", "loading_the_model", "warmed_up"]
)
async def test_a_shutdown_at_any_point_of_the_warm_up_exits_cleanly_with_the_database_closed(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer, when: str
):
    process = await Sidecar.spawn(sidecar_data, workspace, **model_env(model))
    written: list[str] = []
    try:
        if when == "with_initialize":  # the window's first request and its quit, together
            started = process.request("initialize", {"client_name": "tests"})
            stopping = process.request("shutdown")
            assert "result" in await started and "result" in await stopping
            code = await process.exited()
        else:
            await process.call("initialize", {"client_name": "tests"})
            if when == "loading_the_model":
                await process.wait_for_log(LITELLM_LOADING)
            elif when == "warmed_up":
                await process.wait_for_log(WARMED_UP)
            written.append((await process.call("thread/create", {"title": when}))["title"])
            await process.call("shutdown")
            code = await process.exited()
    finally:
        await process.kill()
    assert (code, b"Traceback" in process.stderr) == (0, False), process.stderr[-4000:]
    # Closed as the last connection closes a WAL database: checkpointed, its WAL removed.
    assert not (sidecar_data / "atrium.db-wal").exists()
    with closing(sqlite3.connect(f"file:{sidecar_data / 'atrium.db'}?mode=ro", uri=True)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert [t for (t,) in db.execute("SELECT title FROM threads")] == written
