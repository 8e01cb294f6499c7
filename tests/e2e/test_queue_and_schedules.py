"""The real sidecar with a scripted model on 127.0.0.1: messages sent while a run goes (queue
modes over the wire, and across a SIGKILL), schedules that fire on time or after a restart,
one sidecar per data folder, and the heartbeat."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import EXIT_REFUSED, QueueErrorCode, refusal_reason
from tests.e2e.harness import RpcFailure, Sidecar
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


def model_env(model: ScriptedModelServer, **extra: str) -> dict[str, str]:
    return {
        "ATRIUM_MODEL": "openai/gpt-4o-mini",
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
        "TZ": "UTC",
        **extra,
    }


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    process = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    yield process
    await process.kill()


def receipts(sidecar: Sidecar, queued_id: str) -> list[str]:
    return [
        m["params"]["message"]["status"]
        for m in sidecar.raw
        if m.get("method") == "queue/update" and m["params"]["message"]["id"] == queued_id
    ]


def notifications(sidecar: Sidecar, method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in sidecar.raw if m.get("method") == method]


def user_texts(request_body: dict[str, Any]) -> str:
    return json.dumps([m for m in request_body["messages"] if m["role"] == "user"])


async def finished_runs(sidecar: Sidecar, count: int, within: float = 180) -> list[str]:
    def done(evs: list[Any]) -> bool:
        return sum(e.event.type == "run_finished" for e in evs) >= count

    await sidecar.wait_for(done, within)
    return [e.run_id for e in sidecar.events if e.event.type == "run_finished"]


async def test_steer_sent_while_the_model_thinks_reaches_the_next_model_call(
    agent: Sidecar, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(
        Reply.tool_call("workspace__read", {"path": "notes.md"}).after(release),
        Reply.text(answer_text("Wide river; the tide is in.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "notes?"})
    await asyncio.to_thread(model.wait_for_generations, 1, 90)
    queued = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "also mention the tide"}
    )
    assert queued == {"run_id": run["run_id"], "queued_id": queued["queued_id"]}
    release.set()
    await agent.run_to_end(run["run_id"], within=180)
    assert "also mention the tide" in user_texts(model.generation_requests[1].body)
    assert "also mention the tide" not in user_texts(model.generation_requests[0].body)
    await agent.wait_for(lambda _: receipts(agent, queued["queued_id"])[-1:] == ["answered"])
    assert receipts(agent, queued["queued_id"]) == ["queued", "delivered", "answered"]


def streamed(sidecar: Sidecar, run_id: str) -> str:
    return "".join(
        e.event.text  # type: ignore[union-attr]
        for e in sidecar.events
        if e.run_id == run_id and e.event.type == "token"
    )


async def test_a_message_sent_after_the_last_token_before_the_turn_ends_is_the_next_turn(
    agent: Sidecar, model: ScriptedModelServer
):
    """The race at the very end of a turn: every token of the answer has reached the window,
    the model has not yet said it is done, and the author sends a message.

    The answer is paced (30 ms a piece) so it spans several of the engine's 10 ms read windows:
    DSPy's stream listener streams nothing of an answer whose field markers all arrive in one
    chunk (it takes that for a cached response), so an answer read in a single window would
    only show when the model finishes."""
    release = threading.Event()
    model.push(
        Reply.text(
            answer_text("A long answer, all streamed."), chunk_size=4, chunk_delay=0.02
        ).after(release, before_finish=True),
        Reply.text(answer_text("And the PS too.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "write"})
    await agent.wait_for(lambda _: "all streamed." in streamed(agent, run["run_id"]), 120)
    queued = await agent.call("run/start", {"thread_id": thread["id"], "text": "add a PS"})
    assert queued["run_id"] == run["run_id"]  # queued behind the turn, not refused
    release.set()
    runs = await finished_runs(agent, 2)
    assert runs[0] == run["run_id"] and len(set(runs)) == 2
    assert "add a PS" in user_texts(model.generation_requests[1].body)
    assert "add a PS" not in user_texts(model.generation_requests[0].body)
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert [m["content"] for m in got["messages"] if m["role"] == "user"] == ["write", "add a PS"]
    assert [m["content"] for m in got["messages"] if m["role"] == "assistant"] == [
        "A long answer, all streamed.",
        "And the PS too.",
    ]
    await agent.wait_for(lambda _: receipts(agent, queued["queued_id"])[-1:] == ["answered"])
    assert receipts(agent, queued["queued_id"]) == ["queued", "delivered", "answered"]


async def test_a_message_sent_while_the_answer_streams_becomes_the_next_turn(
    agent: Sidecar, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(
        Reply.text(answer_text("A long answer, streaming."), chunk_size=4).after(
            release, mid_stream=True
        ),
        Reply.text(answer_text("And the PS too.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "write"})
    await asyncio.to_thread(model.wait_for_generations, 1, 90)
    queued = await agent.call("run/start", {"thread_id": thread["id"], "text": "add a PS"})
    release.set()
    runs = await finished_runs(agent, 2)
    assert runs[0] == run["run_id"] and len(set(runs)) == 2
    assert "add a PS" in user_texts(model.generation_requests[1].body)
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert [m["content"] for m in got["messages"] if m["role"] == "user"] == ["write", "add a PS"]
    assert receipts(agent, queued["queued_id"])[-1] == "answered"


async def test_interrupt_stops_the_running_turn_and_starts_the_new_message(
    agent: Sidecar, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(Reply.hang(release), Reply.text(answer_text("The sea, then.")))
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "the river"})
    await asyncio.to_thread(model.wait_for_generations, 1, 90)
    new = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "no, the sea", "mode": "interrupt"}
    )
    assert new["run_id"] != run["run_id"] and new["queued_id"]
    assert [e.event.type for e in agent.run_events(run["run_id"])][-1] == "run_cancelled"
    await agent.run_to_end(new["run_id"], within=180)
    release.set()
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    assert got["messages"][-1]["content"].strip() == "The sea, then."


async def test_collect_and_followup_over_the_wire_and_a_bad_mode_is_refused(
    agent: Sidecar, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(
        Reply.text(answer_text("first")).after(release),
        Reply.text(answer_text("merged")),
        Reply.text(answer_text("followed")),
    )
    thread = await agent.call("thread/create", {})
    await agent.call("run/start", {"thread_id": thread["id"], "text": "go"})
    await asyncio.to_thread(model.wait_for_generations, 1, 90)
    with pytest.raises(RpcFailure) as bad:
        await agent.call("run/start", {"thread_id": thread["id"], "text": "x", "mode": "shout"})
    detail = bad.value.error["data"][0]
    assert bad.value.code == -32602 and detail["loc"] == ["mode"]
    assert "'steer', 'collect', 'followup' or 'interrupt'" in detail["msg"]
    for text, mode in (("a", "collect"), ("later", "followup"), ("b", "collect")):
        await agent.call("run/start", {"thread_id": thread["id"], "text": text, "mode": mode})
    release.set()
    await finished_runs(agent, 3)
    got = await agent.call("thread/get", {"thread_id": thread["id"]})
    users = [m["content"] for m in got["messages"] if m["role"] == "user"]
    assert users == ["go", "a\n\nb", "later"]
    listing = await agent.call("queue/list", {"thread_id": thread["id"]})
    assert listing["messages"] == [] and listing["default_mode"] == "steer"


async def test_three_queued_messages_survive_a_sigkill_and_each_is_delivered_once(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
):
    release = threading.Event()
    model.push(Reply.hang(release))
    first = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    thread = await first.call("thread/create", {})
    await first.call("run/start", {"thread_id": thread["id"], "text": "long job"})
    await asyncio.to_thread(model.wait_for_generations, 1, 90)
    for n in range(3):
        await first.call(
            "run/start", {"thread_id": thread["id"], "text": f"note {n}", "mode": "followup"}
        )
    await first.kill()
    release.set()
    model.push(*(Reply.text(answer_text(f"answer {n}")) for n in range(3)))
    second = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    try:
        await finished_runs(second, 3)
        got = await second.call("thread/get", {"thread_id": thread["id"]})
        users = [m["content"] for m in got["messages"] if m["role"] == "user"]
        assert users == ["long job", "note 0", "note 1", "note 2"]
        listing = await second.call("queue/list", {"thread_id": thread["id"]})
        assert listing["messages"] == []
    finally:
        await second.kill()


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


async def test_a_one_shot_a_few_seconds_ahead_runs_on_a_new_thread(
    agent: Sidecar, model: ScriptedModelServer
):
    model.push(Reply.text(answer_text("Tea time.")))
    created = await agent.call(
        "schedule/create",
        {"kind": "once", "spec": _iso(time.time() + 3), "prompt": "remind me: tea"},
    )
    assert created["timezone"] == "UTC" and len(created["next_fires_local"]) == 1
    run_id = (await finished_runs(agent, 1))[0]
    history = await agent.call("schedule/history", {"schedule_id": created["id"]})
    fire = history["fires"][0]
    assert fire["run_id"] == run_id and fire["status"] in {"started", "finished"}
    got = await agent.call("thread/get", {"thread_id": fire["thread_id"]})
    assert got["messages"][0]["content"] == "remind me: tea"
    listed = await agent.call("schedule/list", {})
    assert listed["schedules"][0]["next_fire_at"] is None


async def test_a_one_shot_due_while_the_sidecar_was_dead_runs_once_or_is_skipped_per_policy(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
):
    first = await Sidecar.start(sidecar_data, workspace, **model_env(model))
    due = _iso(time.time() + 30)
    run_once = await first.call(
        "schedule/create", {"kind": "once", "spec": due, "prompt": "catch up", "name": "A"}
    )
    skip = await first.call(
        "schedule/create",
        {"kind": "once", "spec": due, "prompt": "never", "name": "B", "missed": "skip"},
    )
    await first.kill()
    model.push(Reply.text(answer_text("Caught up.")))
    # The sidecar comes back two minutes later (its clock is shifted, nobody sleeps).
    later = await Sidecar.start(
        sidecar_data, workspace, **model_env(model, ATRIUM_CLOCK_OFFSET="120")
    )
    try:
        await finished_runs(later, 1)
        ran = (await later.call("schedule/history", {"schedule_id": run_once["id"]}))["fires"]
        skipped = (await later.call("schedule/history", {"schedule_id": skip["id"]}))["fires"]
        assert [f["reason"] for f in ran] == ["ran once for 1 missed time"]
        assert [f["status"] for f in skipped] == ["skipped"]
        assert skipped[0]["reason"].startswith("missed: Atrium was not running at ")
    finally:
        await later.kill()
    again = await Sidecar.start(
        sidecar_data, workspace, **model_env(model, ATRIUM_CLOCK_OFFSET="240")
    )
    try:
        await again.call("ping")
        ran = (await again.call("schedule/history", {"schedule_id": run_once["id"]}))["fires"]
        assert len(ran) == 1 and len(model.generation_requests) == 1
    finally:
        await again.kill()


async def test_bad_schedules_are_refused_with_their_reason_and_nothing_is_stored(
    agent: Sidecar,
):
    gone = await agent.call("thread/create", {})
    await agent.call("thread/delete", {"thread_id": gone["id"]})
    cases = {
        "bad_cron": {"kind": "cron", "spec": "61 * * * *"},
        "unknown_timezone": {"kind": "cron", "spec": "0 9 * * *", "timezone": "Mars/Olympus"},
        "in_the_past": {"kind": "once", "spec": "2001-01-01T09:00:00"},
        "bad_interval": {"kind": "interval", "spec": "0"},
        "prompt_too_long": {"kind": "interval", "spec": "1h", "prompt": "x" * 1_000_000},
        "no_such_thread": {"kind": "interval", "spec": "1h", "thread_id": gone["id"]},
    }
    for reason, params in cases.items():
        with pytest.raises(RpcFailure) as refused:
            await agent.call("schedule/create", {"prompt": "p", **params})
        assert refused.value.code == QueueErrorCode.SCHEDULE_INVALID, reason
        assert refused.value.error["data"] == {"reason": reason}
    with pytest.raises(RpcFailure) as missing:
        await agent.call("schedule/pause", {"schedule_id": "nope"})
    assert missing.value.code == QueueErrorCode.NO_SUCH_SCHEDULE
    assert (await agent.call("schedule/list", {}))["schedules"] == []


async def test_a_second_sidecar_on_the_same_data_folder_refuses_to_start(
    agent: Sidecar, sidecar_data: Path, workspace: Path
):
    second = await Sidecar.spawn(sidecar_data, workspace)
    async with asyncio.timeout(60):
        code = await second.proc.wait()
    await second.kill()
    assert code == EXIT_REFUSED
    reason = refusal_reason(second.stderr.decode("utf-8", "replace"))
    assert reason is not None and "in use by another Atrium" in reason
    assert str(agent.proc.pid) in reason
    await agent.call("ping")


async def test_heartbeat_ok_is_silent_other_text_notifies_and_quiet_hours_skip(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    hour = datetime.now(UTC).hour
    around = f"{(hour + 23) % 24:02d}:00", f"{(hour + 2) % 24:02d}:00"
    await agent.call("automation/set", {"active_start": around[0], "active_end": around[1]})
    empty = await agent.call("heartbeat/run_now", {})
    assert (empty["status"], empty["reason"]) == ("skipped", "empty-heartbeat-file")
    (workspace / ".atrium").mkdir()
    (workspace / ".atrium" / "HEARTBEAT.md").write_text("Check the build.\n", encoding="utf-8")
    model.push(Reply.text(answer_text("HEARTBEAT_OK")), Reply.text(answer_text("Build is red")))
    quiet = await agent.call("heartbeat/run_now", {})
    assert quiet["status"] == "running"
    await agent.run_to_end(quiet["run_id"], within=180)
    loud = await agent.call("heartbeat/run_now", {})
    await agent.run_to_end(loud["run_id"], within=180)
    await agent.call("ping")
    beats = (await agent.call("heartbeat/history", {}))["beats"]
    assert [(b["status"], b["text"]) for b in beats[:2]] == [
        ("notified", "Build is red"),
        ("ok", "HEARTBEAT_OK"),
    ]
    notes = notifications(agent, "automation/notify")
    assert [(n["kind"], n["text"]) for n in notes] == [("heartbeat", "Build is red")]
    outside = f"{(hour + 2) % 24:02d}:00", f"{(hour + 3) % 24:02d}:00"
    await agent.call("automation/set", {"active_start": outside[0], "active_end": outside[1]})
    skipped = await agent.call("heartbeat/run_now", {})
    assert (skipped["status"], skipped["reason"]) == ("skipped", "quiet-hours")
    assert (await agent.call("heartbeat/history", {}))["beats"][0]["reason"] == "quiet-hours"


async def test_a_message_sent_while_an_approval_waits_reaches_the_turn_after_the_answer(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    model.push(
        Reply.tool_call("workspace__write", {"path": "ch1.md", "content": "It began.\n"}),
        Reply.text(answer_text("Written, in a calm tone.")),
    )
    thread = await agent.call("thread/create", {})
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "write chapter one"})
    events = await agent.run_to_end(run["run_id"], within=180)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    queued = await agent.call(
        "run/start", {"thread_id": thread["id"], "text": "keep the tone calm"}
    )
    assert queued["run_id"] == run["run_id"] and queued["queued_id"]
    pending = (await agent.call("thread/get", {"thread_id": thread["id"]}))["interrupts"]
    assert [i["id"] for i in pending] == [interrupt.id]  # the question is still there
    resumed = await agent.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": interrupt.id,
            "value": {"decision": "allow_once"},
        },
    )
    await agent.run_to_end(resumed["run_id"], within=180)
    assert (workspace / "ch1.md").read_text() == "It began.\n"
    assert "keep the tone calm" in user_texts(model.generation_requests[1].body)
    await agent.wait_for(lambda _: receipts(agent, queued["queued_id"])[-1:] == ["answered"])
    assert receipts(agent, queued["queued_id"]) == ["queued", "delivered", "answered"]


async def test_the_agent_creates_a_schedule_from_a_conversation_only_after_the_authors_yes(
    agent: Sidecar, model: ScriptedModelServer
):
    """ "Remind me every weekday at 9": the model calls schedule__create, which is a write, so the
    author is asked first; a refusal stores nothing, a yes stores exactly that schedule."""
    weekday_nine = {
        "kind": "cron",
        "spec": "0 9 * * 1-5",
        "prompt": "Remind me to send the chapter to Zofia.",
        "timezone": "Europe/Berlin",
        "name": "Chapter reminder",
    }
    model.push(
        Reply.tool_call("schedule__create", weekday_nine),
        Reply.text(answer_text("Understood, no reminder.")),
        Reply.tool_call("schedule__create", weekday_nine),
        Reply.text(answer_text("Done: every weekday at 9:00 Berlin time.")),
    )
    thread = await agent.call("thread/create", {})

    async def ask_and_answer(decision: str) -> Any:
        run = await agent.call(
            "run/start",
            {"thread_id": thread["id"], "text": "remind me every weekday at 9 to send the chapter"},
        )
        events = await agent.run_to_end(run["run_id"], within=180)
        asked = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
        assert (asked.kind, asked.server, asked.tool) == ("approval", "schedule", "create")
        assert asked.arguments == weekday_nine
        assert (await agent.call("schedule/list", {}))["schedules"] == []
        resumed = await agent.call(
            "run/resume",
            {"thread_id": thread["id"], "interrupt_id": asked.id, "value": {"decision": decision}},
        )
        return await agent.run_to_end(resumed["run_id"], within=180)

    await ask_and_answer("deny")
    assert (await agent.call("schedule/list", {}))["schedules"] == []

    await ask_and_answer("allow_once")
    schedules = (await agent.call("schedule/list", {}))["schedules"]
    assert [(s["kind"], s["spec"], s["timezone"], s["prompt"]) for s in schedules] == [
        ("cron", "0 9 * * 1-5", "Europe/Berlin", "Remind me to send the chapter to Zofia.")
    ]
    assert all(
        datetime.fromisoformat(t).weekday() < 5 and datetime.fromisoformat(t).hour == 9
        for t in schedules[0]["next_fires_local"]
    )
