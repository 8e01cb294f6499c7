"""A call that may have run: asked as a new question, decided by the author, never re-run on its
own; what a crash leaves `running` is closed without losing a question the author saw."""

from __future__ import annotations

import pytest

from sidecar.runtime.recovery import CRASHED, MARKED_DONE, SKIPPED, UNCERTAIN
from sidecar.store import Store
from tests.sidecar.runtime.conftest import Rig
from tests.sidecar.runtime.scripted import answer, call

pytestmark = pytest.mark.anyio


async def _cut_off(rig: Rig) -> str:
    """A granted call cancelled mid-run: its intent journaled, no result (what a kill leaves)."""
    thread = rig.store.create_thread("t")
    rig.store.add_grant(thread.id, "slow", "hold")
    rig.planner.script += [call("h1", "slow__hold", label="x")]
    await rig.runs.start(thread.id, "hold it")
    await rig.hold.entered.wait()
    await rig.runs.cancel(thread.id)
    rig.hold.release.set()
    return thread.id


async def _question(rig: Rig, thread_id: str) -> str:
    retried = await rig.runs.retry(thread_id)
    events = await rig.finish(retried)
    asked = [e.event.interrupt for e in events if e.event.type == "interrupt"]  # type: ignore[union-attr]
    assert len(asked) == 1 and events[-1].event.outcome == "interrupted"  # type: ignore[union-attr]
    return asked[0].id


@pytest.mark.parametrize(
    ("choice", "text", "is_error"), [("Mark as done", MARKED_DONE, False), ("skip", SKIPPED, True)]
)
async def test_marking_done_or_skipping_records_the_decision_without_running_again(
    rig: Rig, choice: str, text: str, is_error: bool
) -> None:
    thread_id = await _cut_off(rig)
    question = await _question(rig, thread_id)
    rig.planner.script.append(answer("noted"))
    await rig.finish(await rig.runs.resume(thread_id, question, {"answer": choice}))
    assert rig.hold.calls == 1
    results = [m for m in rig.store.recent_messages(thread_id, 10) if m.role == "tool"]
    assert [(m.content, m.is_error) for m in results] == [(text, is_error)]
    assert rig.store.recent_messages(thread_id, 10)[-1].content == "noted"
    assert rig.store.pending_interrupts(thread_id) == []


async def test_a_retry_while_the_question_is_open_asks_the_same_question_again(rig: Rig) -> None:
    thread_id = await _cut_off(rig)
    first = await _question(rig, thread_id)
    assert await _question(rig, thread_id) == first
    assert rig.hold.calls == 1
    assert [i.id for i in rig.store.pending_interrupts(thread_id)] == [first]


async def test_a_new_message_records_the_call_as_uncertain_not_as_not_run(rig: Rig) -> None:
    thread_id = await _cut_off(rig)
    await _question(rig, thread_id)
    rig.planner.script.append(answer("fresh"))
    await rig.finish(await rig.runs.start(thread_id, "something else"))
    results = [m for m in rig.store.recent_messages(thread_id, 10) if m.role == "tool"]
    assert [(m.content, m.is_error) for m in results] == [(UNCERTAIN, True)]
    assert rig.hold.calls == 1
    entry = rig.store.journal_entry(f"{thread_id}:h1")
    assert entry is not None and entry.result is not None and entry.result["text"] == UNCERTAIN


def _crashed_run(store: Store, *, with_intent: bool) -> tuple[str, str]:
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "resume")
    store.add_message(thread.id, "user", "write it")
    if with_intent:
        store.journal_intent(f"{thread.id}:c1", thread.id, "workspace", "write", {"path": "a"})
    form = {
        "kind": "form",
        "title": "Which branch?",
        "body": "",
        "server": "git",
        "message": "Which branch?",
        "live": True,
        "call_id": "c1",
    }
    store.save_interrupt("live1", thread.id, "r1", "form", form)
    return thread.id, "live1"


async def test_recovery_turns_an_open_intent_into_a_new_question_that_carries_the_live_one(
    rig: Rig,
) -> None:
    thread_id, live_id = _crashed_run(rig.store, with_intent=True)
    rig.runs.recover_after_crash()
    [question] = rig.store.pending_interrupts(thread_id)
    assert question.id != live_id and question.kind == "question"
    assert "Which branch?" in question.payload["body"]
    assert '"path": "a"' in question.payload["body"]
    assert rig.store.get_thread(thread_id).status == "interrupted"
    assert rig.store.runs_in_status("running") == []


async def test_recovery_without_an_open_intent_names_the_lost_live_question_in_the_error(
    rig: Rig,
) -> None:
    thread_id, _ = _crashed_run(rig.store, with_intent=False)
    rig.runs.recover_after_crash()
    assert rig.store.pending_interrupts(thread_id) == []
    thread = rig.store.get_thread(thread_id)
    assert thread.status == "failed" and thread.last_error is not None
    assert thread.last_error.startswith(CRASHED) and "Which branch?" in thread.last_error


async def test_a_graph_interrupt_raised_again_under_an_answered_id_is_pending_again(
    rig: Rig,
) -> None:
    thread = rig.store.create_thread("t")
    payload = {"kind": "question", "title": "t", "body": "", "question": "q?"}
    rig.store.raise_interrupt("g1", thread.id, "r1", "question", payload)
    rig.store.answer_interrupt("g1", {"answer": "yes"})
    rig.store.raise_interrupt("g1", thread.id, "r2", "question", payload)
    [again] = rig.store.pending_interrupts(thread.id)
    assert (again.id, again.run_id, again.answer) == ("g1", "r2", None)


async def test_a_subagents_cut_off_call_is_asked_on_the_authors_thread(rig: Rig) -> None:
    thread = rig.store.create_thread("t")
    sub = rig.store.create_thread("sub", parent_id=thread.id)
    rig.store.create_run("r1", thread.id, "start")
    rig.store.journal_intent(f"{sub.id}:c9", sub.id, "workspace", "write", {"path": "b"})
    rig.runs.recover_after_crash()
    [question] = rig.store.pending_interrupts(thread.id)
    assert '"path": "b"' in question.payload["body"]
    assert rig.store.pending_interrupts(sub.id) == []
    assert rig.store.get_thread(thread.id).status == "interrupted"
