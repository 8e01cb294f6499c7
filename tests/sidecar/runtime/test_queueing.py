"""Queue modes in-process: real store file, real graph and checkpoints, a scripted planner.

A message for a busy thread is queued, never refused; steer reaches the running turn before its
next planner step, collect merges, followup keeps order, interrupt stops the turn at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sidecar.host.host import ServerSpec, ToolHost
from sidecar.llm.types import PlannerError
from sidecar.protocol import MAX_QUEUED_PER_THREAD, QueuedMessageInfo
from sidecar.runtime.queueing import (
    AlreadyDeliveredError,
    NoSuchQueuedError,
    QueueDesk,
    QueueFullError,
)
from sidecar.store import Store, open_database
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import Gate, ScriptedPlanner, answer, call
from tests.sidecar.runtime.wiring import wire_runtime

pytestmark = pytest.mark.anyio


@dataclass
class QueueRig:
    rig: Rig
    desk: QueueDesk
    receipts: list[QueuedMessageInfo] = field(default_factory=list[QueuedMessageInfo])
    started: list[str] = field(default_factory=list[str])
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def statuses(self, message_id: str) -> list[str]:
        return [r.status for r in self.receipts if r.id == message_id]

    async def settle(self, thread_id: str) -> None:
        """Wait until the thread is idle with nothing left queued."""
        async with asyncio.timeout(30):
            while self.rig.runs.is_busy(thread_id) or self.desk.repo.count_queued(thread_id):
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
async def qrig(tmp_path: Path) -> AsyncIterator[QueueRig]:
    from mcp_servers.workspace import build_server

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("the river is wide\n")
    db = open_database(tmp_path / "atrium.db")
    store = Store(db)
    host = ToolHost([ServerSpec("workspace", lambda: build_server(workspace))])
    host.start()
    await host.wait_ready()
    planner = ScriptedPlanner([])
    holder: list[QueueRig] = []

    def sink(params: Any) -> None:
        holder[0].rig.sink(params)
        holder[0].changed.set()
        if params.event.type == "run_started":
            holder[0].started.append(params.run_id)

    receipts: list[QueuedMessageInfo] = []
    wired = wire_runtime(
        store,
        host,
        lambda: planner,
        sink,
        tmp_path,
        workspace=workspace,
        notify_queue=receipts.append,
    )
    rig = Rig(db, store, wired.runs, planner, workspace, None)  # type: ignore[arg-type]
    holder.append(QueueRig(rig, wired.queue, receipts))
    yield holder[0]
    await wired.aclose()
    await host.aclose()
    db.close()


def _texts(history: list[Any]) -> list[str]:
    return [t.content for t in history if t.role == "user"]


async def test_steer_reaches_the_running_turn_before_its_next_planner_step(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [
        gate,
        call("c1", "workspace__read", path="notes.md"),
        answer("The river is wide, and I looked at the tide too."),
    ]
    run_id, none = await qrig.desk.submit(thread.id, "what do my notes say?")
    assert none is None
    await gate.entered.wait()
    busy_run, queued_id = await qrig.desk.submit(thread.id, "also mention the tide", "steer")
    assert busy_run == run_id and queued_id is not None
    gate.release.set()
    await qrig.rig.finish(run_id)
    await qrig.settle(thread.id)
    second_step = qrig.rig.planner.seen[1]
    assert _texts(second_step)[-1] == "also mention the tide"
    assert qrig.statuses(queued_id) == ["queued", "delivered", "answered"]
    assert qrig.started == [run_id]  # no extra turn
    contents = [m.content for m in qrig.rig.store.recent_messages(thread.id, 10)]
    assert contents.count("also mention the tide") == 1


async def test_a_steer_message_sent_during_the_last_step_becomes_the_next_turn(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("first answer"), answer("second answer")]
    run_id, _ = await qrig.desk.submit(thread.id, "hello")
    await gate.entered.wait()
    _, queued_id = await qrig.desk.submit(thread.id, "and one more thing")
    gate.release.set()
    await qrig.settle(thread.id)
    assert len(qrig.started) == 2 and qrig.started[0] == run_id
    assert _texts(qrig.rig.planner.seen[1])[-1] == "and one more thing"
    assert qrig.statuses(queued_id or "") == ["queued", "delivered", "answered"]
    assert qrig.rig.store.recent_messages(thread.id, 10)[-1].content == "second answer"


async def test_collect_merges_every_queued_message_into_one_turn(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("one"), answer("merged")]
    await qrig.desk.submit(thread.id, "start")
    await gate.entered.wait()
    ids = [(await qrig.desk.submit(thread.id, f"part {n}", "collect"))[1] for n in range(3)]
    gate.release.set()
    await qrig.settle(thread.id)
    assert len(qrig.started) == 2
    assert _texts(qrig.rig.planner.seen[1])[-1] == "part 0\n\npart 1\n\npart 2"
    delivered_runs = {r.run_id for r in qrig.receipts if r.status == "delivered"}
    assert delivered_runs == {qrig.started[1]}
    assert all(qrig.statuses(i or "")[-1] == "answered" for i in ids)


async def test_followups_each_become_their_own_turn_in_the_order_sent(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("a0"), answer("a1"), answer("a2")]
    await qrig.desk.submit(thread.id, "start")
    await gate.entered.wait()
    for n in (1, 2):
        await qrig.desk.submit(thread.id, f"follow {n}", "followup")
    gate.release.set()
    await qrig.settle(thread.id)
    assert len(qrig.started) == 3
    assert [_texts(s)[-1] for s in qrig.rig.planner.seen[1:]] == ["follow 1", "follow 2"]
    answers = [
        m.content for m in qrig.rig.store.recent_messages(thread.id, 10) if m.role == "assistant"
    ]
    assert answers == ["a0", "a1", "a2"]


async def test_interrupt_stops_the_turn_and_the_message_starts_the_next_at_once(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("never said"), answer("about the sea instead")]
    first, _ = await qrig.desk.submit(thread.id, "write about the river")
    await gate.entered.wait()
    second, queued_id = await qrig.desk.submit(thread.id, "no, the sea", "interrupt")
    assert second != first and queued_id is not None
    assert qrig.rig.types(first)[-1] == "run_cancelled"
    qrig.rig.planner.script.pop(0)  # the step the cancelled turn never took
    await qrig.rig.finish(second)
    assert _texts(qrig.rig.planner.seen[-1])[-1] == "no, the sea"
    assert qrig.statuses(queued_id) == ["queued", "delivered", "answered"]


async def test_a_message_sent_while_an_approval_waits_reaches_the_turn_after_the_answer(
    qrig: QueueRig,
):
    thread = qrig.rig.store.create_thread("t")
    qrig.rig.planner.script += [
        call("q1", "atrium__ask_author", question="Which chapter?"),
        answer("Chapter 2, in a calm tone."),
    ]
    run_id, _ = await qrig.desk.submit(thread.id, "edit a chapter")
    events = await qrig.rig.finish(run_id)
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    same, queued_id = await qrig.desk.submit(thread.id, "keep the tone calm")
    assert same == run_id and queued_id is not None
    assert qrig.statuses(queued_id) == ["queued"]
    assert [i.id for i in qrig.rig.store.pending_interrupts(thread.id)] == [interrupt.id]
    resumed = await qrig.rig.runs.resume(thread.id, interrupt.id, {"answer": "2"})
    await qrig.rig.finish(resumed)
    await qrig.settle(thread.id)
    assert _texts(qrig.rig.planner.seen[1])[-1] == "keep the tone calm"
    assert qrig.statuses(queued_id) == ["queued", "delivered", "answered"]
    assert qrig.started == [run_id, resumed]


async def test_a_queued_message_can_be_edited_or_withdrawn_until_delivered(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    other = qrig.rig.store.create_thread("other")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("one"), answer("two")]
    await qrig.desk.submit(thread.id, "start")
    await gate.entered.wait()
    _, keep = await qrig.desk.submit(thread.id, "typo hree", "followup")
    _, drop = await qrig.desk.submit(thread.id, "never mind", "followup")
    assert keep and drop
    assert qrig.desk.edit(thread.id, keep, "three").text == "three"
    assert qrig.desk.withdraw(thread.id, drop).status == "withdrawn"
    with pytest.raises(NoSuchQueuedError):
        qrig.desk.withdraw(other.id, keep)
    gate.release.set()
    await qrig.settle(thread.id)
    assert _texts(qrig.rig.planner.seen[1])[-1] == "three"
    assert len(qrig.started) == 2
    with pytest.raises(AlreadyDeliveredError):
        qrig.desk.edit(thread.id, keep, "too late")
    with pytest.raises(AlreadyDeliveredError):
        qrig.desk.withdraw(thread.id, drop)


async def test_ten_thousand_messages_on_one_thread_fill_the_queue_then_are_refused_clearly(
    qrig: QueueRig,
):
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("one"), answer("merged")]
    await qrig.desk.submit(thread.id, "start")
    await gate.entered.wait()
    accepted = refused = 0
    errors: set[str] = set()
    for n in range(10_000):
        try:
            await qrig.desk.submit(thread.id, f"note {n}", "collect")
            accepted += 1
        except QueueFullError as exc:
            refused += 1
            errors.add(str(exc).split(";")[0])
    assert (accepted, refused) == (MAX_QUEUED_PER_THREAD, 10_000 - MAX_QUEUED_PER_THREAD)
    cap = MAX_QUEUED_PER_THREAD
    assert errors == {f"{cap} messages are already queued on this thread (the most is {cap})"}
    gate.release.set()
    await qrig.settle(thread.id)
    merged = _texts(qrig.rig.planner.seen[1])[-1].split("\n\n")
    assert merged == [f"note {n}" for n in range(MAX_QUEUED_PER_THREAD)]


async def test_an_unknown_mode_is_refused_and_nothing_is_queued(qrig: QueueRig):
    thread = qrig.rig.store.create_thread("t")
    with pytest.raises(ValueError, match="unknown mode 'shout'; modes are steer, collect"):
        await qrig.desk.submit(thread.id, "hi", "shout")
    assert qrig.desk.repo.count_queued(thread.id) == 0 and qrig.started == []


async def test_a_steer_taken_by_a_step_that_failed_reaches_the_retried_step_once(qrig: QueueRig):
    """The step that took the steer message failed before its checkpoint (as a crash would
    leave it): the message is in the conversation and delivered, but not in the turn's state.
    `run/retry` gives it to the retried step, once, and answers it when the turn completes."""
    thread = qrig.rig.store.create_thread("t")
    gate = Gate()
    qrig.rig.planner.script += [
        gate,
        call("c1", "workspace__read", path="notes.md"),
        PlannerError("unreachable", "the model went away"),
        answer("The river is wide; the tide is high."),
    ]
    run_id, _ = await qrig.desk.submit(thread.id, "what do my notes say?")
    await gate.entered.wait()
    _, queued_id = await qrig.desk.submit(thread.id, "also mention the tide", "steer")
    gate.release.set()
    events = await qrig.rig.finish(run_id)
    assert events[-1].event.type == "run_failed"
    assert qrig.statuses(queued_id or "")[-1] == "delivered"

    retried = await qrig.rig.runs.retry(thread.id)
    await qrig.rig.finish(retried)
    await qrig.settle(thread.id)

    retried_step = qrig.rig.planner.seen[-1]
    assert _texts(retried_step).count("also mention the tide") == 1
    assert qrig.statuses(queued_id or "")[-1] == "answered"
    contents = [m.content for m in qrig.rig.store.recent_messages(thread.id, 20)]
    assert contents.count("also mention the tide") == 1
    assert contents[-1] == "The river is wide; the tide is high."


async def test_a_steer_left_by_a_cancelled_turn_is_not_given_to_the_next_turn_again(
    qrig: QueueRig,
):
    thread = qrig.rig.store.create_thread("t")
    gate, second = Gate(), Gate()
    qrig.rig.planner.script += [gate, call("c1", "workspace__read", path="notes.md"), second]
    await qrig.desk.submit(thread.id, "first")
    await gate.entered.wait()
    _, queued_id = await qrig.desk.submit(thread.id, "steer me", "steer")
    gate.release.set()
    await second.entered.wait()  # the step after the tool took the steer message
    await qrig.rig.runs.cancel(thread.id)
    assert qrig.statuses(queued_id or "")[-1] == "delivered"
    qrig.rig.planner.script.append(answer("fresh"))
    await qrig.rig.finish(await qrig.rig.runs.start(thread.id, "a new question"))
    # The new turn reads it once, from the conversation, not again as a steer.
    assert _texts(qrig.rig.planner.seen[-1]).count("steer me") == 1
