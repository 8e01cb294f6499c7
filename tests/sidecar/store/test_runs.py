"""Runs and their events, interrupts, grants and the tool journal."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from sidecar.store import GrantRecord, JournalRecord, RunRecord, Store

pytestmark = pytest.mark.usefixtures("clock")


def _interrupt_status(store: Store, interrupt_id: str) -> str:
    return store.conn.execute(
        "SELECT status FROM interrupts WHERE id = ?", (interrupt_id,)
    ).fetchone()[0]


def test_a_run_is_created_running_and_ended_with_a_status(store: Store) -> None:
    thread = store.create_thread("t")
    run = store.create_run("r1", thread.id, "start")
    assert (run.status, run.ended_at, run.error) == ("running", None, None)
    assert store.runs_in_status("running") == [run]
    store.end_run("r1", "failed", "boom")
    assert store.runs_in_status("running") == []
    [ended] = store.runs_in_status("failed")
    assert isinstance(ended, RunRecord)
    assert (ended.id, ended.error) == ("r1", "boom")
    assert ended.ended_at is not None and ended.ended_at > ended.started_at


def test_run_events_come_back_in_sequence_order(store: Store) -> None:
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "start")
    for seq in (2, 0, 1):
        store.add_run_event("r1", seq, f"type{seq}", f'{{"seq":{seq}}}')
    assert store.run_events("r1") == [
        (0, "type0", '{"seq":0}'),
        (1, "type1", '{"seq":1}'),
        (2, "type2", '{"seq":2}'),
    ]


def test_a_run_event_sequence_number_is_used_once(store: Store) -> None:
    thread = store.create_thread("t")
    store.create_run("r1", thread.id, "start")
    store.add_run_event("r1", 0, "run_started", "{}")
    with pytest.raises(sqlite3.IntegrityError):
        store.add_run_event("r1", 0, "token", "{}")


def test_pending_interrupts_are_listed_in_the_order_raised(store: Store) -> None:
    thread = store.create_thread("t")
    store.save_interrupt("i2", thread.id, "r1", "approval", {"tool": "write"})
    store.save_interrupt("i1", thread.id, None, "question", {"question": "?"})
    pending = store.pending_interrupts(thread.id)
    assert [(i.id, i.kind, i.run_id, i.status) for i in pending] == [
        ("i2", "approval", "r1", "pending"),
        ("i1", "question", None, "pending"),
    ]
    assert pending[0].payload == {"tool": "write"}
    assert pending[0].answer is None


def test_saving_an_interrupt_again_keeps_the_first_payload(store: Store) -> None:
    thread = store.create_thread("t")
    store.save_interrupt("i1", thread.id, "r1", "question", {"question": "first"})
    store.save_interrupt("i1", thread.id, "r2", "question", {"question": "rerun"})
    [only] = store.pending_interrupts(thread.id)
    assert (only.payload, only.run_id) == ({"question": "first"}, "r1")


def test_an_answered_interrupt_is_no_longer_pending_and_keeps_its_answer(store: Store) -> None:
    thread = store.create_thread("t")
    store.save_interrupt("i1", thread.id, "r1", "approval", {})
    store.save_interrupt("i2", thread.id, "r1", "question", {})
    store.answer_interrupt("i1", {"decision": "allow_once"})
    assert [i.id for i in store.pending_interrupts(thread.id)] == ["i2"]
    assert _interrupt_status(store, "i1") == "answered"
    row = store.conn.execute("SELECT answer, answered_at FROM interrupts WHERE id='i1'").fetchone()
    assert row["answer"] == '{"decision": "allow_once"}'
    assert row["answered_at"] is not None


def test_dropping_pending_interrupts_leaves_answered_ones_and_other_threads_alone(
    store: Store,
) -> None:
    thread = store.create_thread("t")
    other = store.create_thread("other")
    store.save_interrupt("answered", thread.id, "r1", "question", {})
    store.save_interrupt("pending", thread.id, "r1", "question", {})
    store.save_interrupt("elsewhere", other.id, "r2", "question", {})
    store.answer_interrupt("answered", {"answer": "yes"})
    store.drop_pending_interrupts(thread.id)
    assert store.pending_interrupts(thread.id) == []
    assert _interrupt_status(store, "pending") == "dropped"
    assert _interrupt_status(store, "answered") == "answered"
    assert [i.id for i in store.pending_interrupts(other.id)] == ["elsewhere"]


def test_grants_are_per_thread_and_recorded_once(store: Store) -> None:
    thread = store.create_thread("t")
    other = store.create_thread("other")
    store.add_grant(thread.id, "workspace", "write")
    store.add_grant(thread.id, "workspace", "write")
    store.add_grant(thread.id, "sandbox", "run")
    assert store.has_grant(thread.id, "workspace", "write")
    assert not store.has_grant(thread.id, "workspace", "delete")
    assert not store.has_grant(other.id, "workspace", "write")
    grants = store.grants(thread.id)
    assert [(g.server, g.tool) for g in grants] == [("workspace", "write"), ("sandbox", "run")]
    assert all(isinstance(g, GrantRecord) and g.thread_id == thread.id for g in grants)


def test_grants_persist_across_reopening_the_file(open_store: Callable[..., Store]) -> None:
    first = open_store()
    thread = first.create_thread("t")
    first.add_grant(thread.id, "workspace", "write")
    before = first.grants(thread.id)
    first.db.close()
    second = open_store()
    assert second.has_grant(thread.id, "workspace", "write")
    assert second.grants(thread.id) == before


def test_the_journal_records_an_intent_then_its_result(store: Store) -> None:
    thread = store.create_thread("t")
    args = {"path": "a.md", "text": "hé"}
    store.journal_intent("k1", thread.id, "workspace", "write", args)
    assert store.journal_entry("k1") == JournalRecord(
        key="k1",
        thread_id=thread.id,
        server="workspace",
        tool="write",
        arguments=args,
        status="intent",
        result=None,
    )
    store.journal_result("k1", {"content": "ok", "is_error": False})
    entry = store.journal_entry("k1")
    assert entry is not None
    assert (entry.status, entry.result) == ("done", {"content": "ok", "is_error": False})


def test_recording_an_intent_again_does_not_erase_a_result(store: Store) -> None:
    # A node that re-runs after an interrupt journals the same key again; the recorded result
    # must survive so the journal can answer instead of calling the tool twice.
    thread = store.create_thread("t")
    store.journal_intent("k1", thread.id, "workspace", "write", {"v": 1})
    store.journal_result("k1", {"content": "done once"})
    store.journal_intent("k1", thread.id, "workspace", "write", {"v": 2})
    entry = store.journal_entry("k1")
    assert entry is not None
    assert (entry.status, entry.arguments, entry.result) == (
        "done",
        {"v": 1},
        {"content": "done once"},
    )


def test_an_unknown_journal_key_has_no_entry(store: Store) -> None:
    assert store.journal_entry("never") is None


def test_the_journal_survives_reopening_the_file(open_store: Callable[..., Store]) -> None:
    first = open_store()
    thread = first.create_thread("t")
    first.journal_intent("k1", thread.id, "sandbox", "run", {"code": "print(1)"})
    first.db.close()
    entry = open_store().journal_entry("k1")
    assert entry is not None
    assert entry.status == "intent"
