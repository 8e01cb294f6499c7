"""Threads and the conversation of record."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from sidecar.store import Store, ThreadNotFoundError
from sidecar.store.records import StoredToolCall

pytestmark = pytest.mark.usefixtures("clock")


def _count(store: Store, sql: str, *args: object) -> int:
    return store.conn.execute(sql, args).fetchone()[0]


def test_a_created_thread_reads_back_as_created(store: Store) -> None:
    thread = store.create_thread("Chapter one")
    assert thread.title == "Chapter one"
    assert thread.status == "idle"
    assert thread.last_error is None
    assert thread.created_at == thread.updated_at
    assert store.get_thread(thread.id) == thread


def test_threads_are_listed_most_recently_updated_first(store: Store) -> None:
    first = store.create_thread("first")
    second = store.create_thread("second")
    third = store.create_thread("third")
    assert [t.id for t in store.list_threads()] == [third.id, second.id, first.id]
    store.add_message(first.id, "user", "bump")
    assert [t.id for t in store.list_threads()] == [first.id, third.id, second.id]


def test_renaming_changes_the_title_and_the_update_time(store: Store) -> None:
    thread = store.create_thread("old")
    renamed = store.rename_thread(thread.id, "new")
    assert renamed.title == "new"
    assert renamed.created_at == thread.created_at
    assert renamed.updated_at > thread.updated_at
    assert store.get_thread(thread.id) == renamed


def test_thread_status_and_last_error_are_stored(store: Store) -> None:
    thread = store.create_thread("t")
    store.set_thread_status(thread.id, "failed", "model unreachable")
    record = store.get_thread(thread.id)
    assert (record.status, record.last_error) == ("failed", "model unreachable")
    store.set_thread_status(thread.id, "idle")
    record = store.get_thread(thread.id)
    assert (record.status, record.last_error) == ("idle", None)


@pytest.mark.parametrize(
    "operation",
    [
        lambda s: s.get_thread("missing"),
        lambda s: s.rename_thread("missing", "x"),
        lambda s: s.set_thread_status("missing", "idle"),
        lambda s: s.delete_thread("missing"),
    ],
    ids=["get", "rename", "set_status", "delete"],
)
def test_operations_on_an_unknown_thread_raise_thread_not_found(
    store: Store, operation: Callable[[Store], object]
) -> None:
    with pytest.raises(ThreadNotFoundError) as info:
        operation(store)
    assert info.value.thread_id == "missing"
    assert isinstance(info.value, LookupError)


def test_deleting_a_thread_removes_everything_under_it_and_nothing_else(store: Store) -> None:
    doomed = store.create_thread("doomed")
    kept = store.create_thread("kept")
    for thread, run_id in ((doomed, "run-d"), (kept, "run-k")):
        store.add_message(thread.id, "user", "hi")
        store.create_run(run_id, thread.id, "start")
        store.add_run_event(run_id, 0, "run_started", "{}")
        store.add_run_event(run_id, 1, "token", '{"text":"a"}')
        store.save_interrupt(f"int-{run_id}", thread.id, run_id, "question", {"q": "?"})
        store.add_grant(thread.id, "workspace", "write")
        store.journal_intent(f"key-{run_id}", thread.id, "workspace", "write", {"p": 1})

    store.delete_thread(doomed.id)

    per_thread = ["messages", "runs", "interrupts", "grants", "tool_journal"]
    for table in per_thread:
        sql = f"SELECT count(*) FROM {table} WHERE thread_id = ?"
        assert _count(store, sql, doomed.id) == 0, table
        assert _count(store, sql, kept.id) == 1, table
    assert store.run_events("run-d") == []
    assert len(store.run_events("run-k")) == 2
    assert [t.id for t in store.list_threads()] == [kept.id]
    with pytest.raises(ThreadNotFoundError):
        store.get_thread(doomed.id)


def test_a_message_for_an_unknown_thread_is_refused(store: Store) -> None:
    with pytest.raises((ThreadNotFoundError, sqlite3.IntegrityError)):
        store.add_message("missing", "user", "orphan")
    assert _count(store, "SELECT count(*) FROM messages") == 0


def test_a_message_id_is_written_at_most_once(store: Store) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "assistant", "first", message_id="turn-1:answer")
    store.add_message(thread.id, "assistant", "second", message_id="turn-1:answer")
    messages = store.recent_messages(thread.id, 10)
    assert [(m.id, m.content) for m in messages] == [("turn-1:answer", "first")]
    assert store.has_message("turn-1:answer")
    assert not store.has_message("turn-2:answer")


def test_messages_without_an_id_get_distinct_ids(store: Store) -> None:
    thread = store.create_thread("t")
    a = store.add_message(thread.id, "user", "same")
    b = store.add_message(thread.id, "user", "same")
    assert a.id != b.id
    assert len(store.recent_messages(thread.id, 10)) == 2


def test_recent_messages_are_the_last_n_in_conversation_order(store: Store) -> None:
    thread = store.create_thread("t")
    other = store.create_thread("other")
    for i in range(10):
        store.add_message(thread.id, "user" if i % 2 == 0 else "assistant", f"m{i}")
        store.add_message(other.id, "user", f"other{i}")
    assert [m.content for m in store.recent_messages(thread.id, 3)] == ["m7", "m8", "m9"]
    assert [m.content for m in store.recent_messages(thread.id, 100)] == [
        f"m{i}" for i in range(10)
    ]
    assert store.recent_messages(thread.id, 0) == []
    assert store.recent_messages("missing", 5) == []


def test_messages_round_trip_every_field(store: Store) -> None:
    thread = store.create_thread("t")
    call = StoredToolCall("call-1", "workspace", "write", {"path": "é.md", "n": [1, None]})
    written = [
        store.add_message(thread.id, "assistant", "", message_id="a", tool_calls=[call]),
        store.add_message(
            thread.id, "tool", "denied", message_id="r", tool_call_id="call-1", is_error=True
        ),
    ]
    assert store.recent_messages(thread.id, 10) == written


def test_unanswered_tool_calls_are_those_without_a_result_message(store: Store) -> None:
    thread = store.create_thread("t")
    other = store.create_thread("other")
    calls = [StoredToolCall(f"c{i}", "workspace", "read", {"i": i}) for i in range(3)]
    store.add_message(thread.id, "assistant", "", tool_calls=calls[:2])
    store.add_message(thread.id, "tool", "ok", tool_call_id="c0")
    store.add_message(thread.id, "assistant", "", tool_calls=calls[2:])
    store.add_message(other.id, "tool", "ok", tool_call_id="c1")
    assert store.unanswered_tool_calls(thread.id) == [calls[1], calls[2]]
    store.add_message(thread.id, "tool", "ok", tool_call_id="c1")
    store.add_message(thread.id, "tool", "failed", tool_call_id="c2", is_error=True)
    assert store.unanswered_tool_calls(thread.id) == []
    assert store.unanswered_tool_calls(other.id) == []
