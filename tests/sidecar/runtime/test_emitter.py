"""The run emitter: streamed text coalesced on the wire, losslessly and in order, the first token
sent at once, pending text sent before any other event, and held while the wire is congested."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from sidecar.protocol import RunCancelled, RunEventParams, SubagentEvent, ToolResult
from sidecar.runtime.emitter import GatedEventSink, RunEmitter
from sidecar.store import Store, open_database

pytestmark = pytest.mark.anyio

TEXTS = ["Grüße, ", "😀 ", "日本語", "\r\n", "line\r", "\nend ", "é" * 3, "\u200d", "✓"]


class Wire:
    """What reached the sink; `until(n)` waits until n characters of text arrived in all."""

    def __init__(self) -> None:
        self.events: list[RunEventParams] = []
        self.chars = 0
        self.arrived = asyncio.Event()

    def __call__(self, params: RunEventParams) -> None:
        self.events.append(params)
        if params.event.type == "token":
            self.chars += len(params.event.text)  # pyright: ignore[reportAttributeAccessIssue]
        self.arrived.set()

    def text(self, run_id: str) -> str:
        return "".join(
            e.event.text  # pyright: ignore[reportAttributeAccessIssue]
            for e in self.events
            if e.run_id == run_id and e.event.type == "token"
        )

    def types(self, run_id: str) -> list[str]:
        return [e.event.type for e in self.events if e.run_id == run_id]

    async def until(self, chars: int) -> None:
        with anyio.fail_after(10):
            while self.chars < chars:
                self.arrived.clear()
                await self.arrived.wait()


class Gate:
    """A flow gate a test opens and closes."""

    def __init__(self) -> None:
        self.full = False
        self.waiting: list[Callable[[], None]] = []

    def congested(self) -> bool:
        return self.full

    def when_ready(self, callback: Callable[[], None]) -> None:
        self.waiting.append(callback)

    def open(self) -> None:
        self.full = False
        waiting, self.waiting = self.waiting, []
        for callback in waiting:
            callback()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = open_database(tmp_path / "atrium.db")
    yield Store(db)
    db.close()


def _emitter(store: Store, sink: Callable[[RunEventParams], None], run: str = "r1") -> RunEmitter:
    thread = store.create_thread("t")
    store.create_run(run, thread.id, "start")
    return RunEmitter(store, sink, run, thread.id, window_s=0.05)


async def test_the_first_token_is_sent_at_once(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    emit.token("Hello")
    assert wire.text("r1") == "Hello"  # synchronously: no timer, no wait


async def test_tokens_within_the_window_leave_together_in_order(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    for text in TEXTS:
        emit.token(text)
    assert len(wire.events) == 1  # the first at once; the rest wait for the window
    await wire.until(len("".join(TEXTS)))
    assert wire.text("r1") == "".join(TEXTS)
    assert len(wire.events) == 2
    assert [e.seq for e in wire.events] == [0, 1]


async def test_a_stream_of_many_tokens_is_exact_and_needs_few_events(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    sent = [f"{i} {TEXTS[i % len(TEXTS)]}" for i in range(20_000)]
    for text in sent:
        emit.token(text)
    emit.flush()
    assert wire.text("r1") == "".join(sent)
    assert len(wire.events) < 100  # the size bound splits it; one event per token would be 20,000


async def test_another_event_sends_the_pending_text_first(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    emit.token("first ")
    emit.token("pending ")
    emit.token("text")
    emit(ToolResult(call_id="c1", is_error=False, content="ok"))
    assert wire.types("r1") == ["token", "token", "tool_result"]
    assert wire.text("r1") == "first pending text"


async def test_a_cancelled_run_loses_no_text_already_streamed(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    for text in TEXTS:
        emit.token(text)
    emit(RunCancelled())  # what the run manager sends when the run task is cancelled
    assert wire.types("r1")[-1] == "run_cancelled"
    assert wire.text("r1") == "".join(TEXTS)
    await asyncio.sleep(0.1)  # the window's timer was cancelled: nothing arrives after the end
    assert wire.types("r1")[-1] == "run_cancelled"


async def test_four_concurrent_runs_each_keep_their_order(store: Store) -> None:
    wire = Wire()
    emitters = [_emitter(store, wire, f"r{i}") for i in range(4)]
    expected = {e.run_id: "".join(f"{e.run_id}:{n};" for n in range(2000)) for e in emitters}

    async def stream(emit: RunEmitter) -> None:
        for n in range(2000):
            emit.token(f"{emit.run_id}:{n};")
            if n % 50 == 0:
                await asyncio.sleep(0)  # interleave the four runs

    async with anyio.create_task_group() as tg:
        for emit in emitters:
            tg.start_soon(stream, emit)
    await wire.until(sum(len(t) for t in expected.values()))
    for run_id, text in expected.items():
        assert wire.text(run_id) == text
        seqs = [e.seq for e in wire.events if e.run_id == run_id]
        assert seqs == list(range(len(seqs)))


async def test_a_congested_wire_holds_the_text_and_sends_it_whole_when_drained(
    store: Store,
) -> None:
    wire, gate = Wire(), Gate()
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "start")
    emit = RunEmitter(store, GatedEventSink(wire, gate), "r1", thread.id, window_s=0.01)
    emit.token("a")  # idle wire: at once
    gate.full = True
    for n in range(5000):
        emit.token(f"{n},")
    await asyncio.sleep(0.05)  # several windows pass while the reader is away
    assert len(wire.events) == 1
    assert gate.waiting  # the emitter asked to be called back
    gate.open()
    assert len(wire.events) == 2
    assert wire.text("r1") == "a" + "".join(f"{n}," for n in range(5000))


async def test_empty_tokens_send_nothing(store: Store) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    emit.token("")
    emit.flush()
    assert wire.events == []


def _delta(task: str, text: str, channel: str = "text") -> SubagentEvent:
    message = json.dumps({"type": "message_delta", "text": text, "channel": channel})
    progress = {"type": "tool_progress", "call_id": "agent", "progress": 0, "message": message}
    return SubagentEvent(task_id=task, plan_id="p1", sub_thread_id=f"sub-{task}", event=progress)


def _deltas_text(wire: Wire, task: str) -> str:
    texts: list[str] = []
    for e in wire.events:
        if isinstance(e.event, SubagentEvent) and e.event.task_id == task:
            texts.append(json.loads(e.event.event["message"]).get("text", ""))
    return "".join(texts)


async def test_a_strong_agents_deltas_coalesce_into_events_of_the_same_shape(
    store: Store,
) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    pieces = [f"{n} {TEXTS[n % len(TEXTS)]}" for n in range(500)]
    for piece in pieces:
        emit(_delta("t1", piece))
    emit.flush()
    assert _deltas_text(wire, "t1") == "".join(pieces)
    assert len(wire.events) == 2  # the first at once, the rest in one event
    merged = wire.events[-1].event
    assert isinstance(merged, SubagentEvent)
    assert (merged.task_id, merged.plan_id, merged.sub_thread_id) == ("t1", "p1", "sub-t1")
    assert merged.event["type"] == "tool_progress" and merged.event["call_id"] == "agent"
    assert json.loads(merged.event["message"])["channel"] == "text"


async def test_streams_of_different_subagents_and_channels_keep_their_order(
    store: Store,
) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    script = [
        _delta("t1", "a1 "),
        _delta("t1", "a2 "),
        _delta("t2", "b1 "),
        _delta("t1", "think", "thinking"),
        _delta("t1", "a3"),
    ]
    for event in script:
        emit(event)
    emit.token("answer")
    emit.flush()
    shown = [
        (e.event.task_id, json.loads(e.event.event["message"])["text"])
        if isinstance(e.event, SubagentEvent)
        else ("answer", e.event.text)  # pyright: ignore[reportAttributeAccessIssue]
        for e in wire.events
    ]
    assert shown == [
        ("t1", "a1 "),
        ("t1", "a2 "),
        ("t2", "b1 "),
        ("t1", "think"),
        ("t1", "a3"),
        ("answer", "answer"),
    ]


async def test_other_subagent_events_pass_unchanged_after_the_pending_text(
    store: Store,
) -> None:
    wire = Wire()
    emit = _emitter(store, wire)
    emit(_delta("t1", "first "))
    emit(_delta("t1", "second"))
    done = {"type": "tool_progress", "call_id": "agent", "message": '{"type": "run_completed"}'}
    emit(SubagentEvent(task_id="t1", event=done))
    assert _deltas_text(wire, "t1").startswith("first second")
    assert wire.events[-1].event.event == done  # pyright: ignore[reportAttributeAccessIssue]
