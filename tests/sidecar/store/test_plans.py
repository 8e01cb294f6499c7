"""Plans and their versioned tasks, the outbox of envelopes, sub-threads, and the schema-2
migration."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sidecar.store import PlanRecord, Store, TaskRecord, open_database
from sidecar.store.db import SCHEMA_VERSION

pytestmark = pytest.mark.usefixtures("clock")


def _spec(task_id: str, *deps: str, title: str = "") -> dict[str, Any]:
    return {
        "id": task_id,
        "title": title or f"Task {task_id}",
        "objective": f"do {task_id}",
        "profile": "general",
        "depends_on": list(deps),
        "success_criteria": "",
    }


def _task(store: Store, plan_id: str, task_id: str) -> TaskRecord:
    task = store.get_task(plan_id, task_id)
    assert task is not None
    return task


def _plan(store: Store, plan_id: str) -> PlanRecord:
    plan = store.get_plan(plan_id)
    assert plan is not None
    return plan


def _ids(store: Store, plan_id: str) -> list[str]:
    return [t.id for t in store.tasks(plan_id)]


@pytest.fixture
def thread_id(store: Store) -> str:
    return store.create_thread("t").id


@pytest.fixture
def plan_id(store: Store, thread_id: str) -> str:
    store.create_plan("p1", thread_id, "the goal", "call-1")
    return "p1"


# plans and tasks


def test_a_new_plan_awaits_approval_at_version_zero_without_tasks(
    store: Store, thread_id: str, plan_id: str
) -> None:
    plan = _plan(store, plan_id)
    assert (plan.thread_id, plan.goal, plan.version) == (thread_id, "the goal", 0)
    assert (plan.status, plan.call_id) == ("awaiting_approval", "call-1")
    assert store.tasks(plan_id) == []
    assert store.plans(thread_id) == [plan]
    assert store.get_plan("missing") is None


def test_plan_status_changes_keep_the_call_id_unless_given(store: Store, plan_id: str) -> None:
    store.set_plan_status(plan_id, "running")
    assert (_plan(store, plan_id).status, _plan(store, plan_id).call_id) == ("running", "call-1")
    store.set_plan_status(plan_id, "done", call_id="call-2")
    assert (_plan(store, plan_id).status, _plan(store, plan_id).call_id) == ("done", "call-2")


def test_the_first_tasks_make_version_one_in_the_given_order(store: Store, plan_id: str) -> None:
    version = store.replace_open_tasks(
        plan_id, "goal v1", [_spec("c"), _spec("a"), _spec("b", "a")]
    )
    assert version == 1
    assert _plan(store, plan_id).version == 1
    assert _plan(store, plan_id).goal == "goal v1"
    tasks = store.tasks(plan_id)
    assert [(t.id, t.seq) for t in tasks] == [("c", 0), ("a", 1), ("b", 2)]
    b = tasks[2]
    assert (b.status, b.attempt, b.version, b.stalled) == ("pending", 0, 0, False)
    assert b.depends_on == ("a",)
    assert b.title == "Task b"
    assert not b.final


def test_a_replan_keeps_succeeded_tasks_and_replaces_open_ones(store: Store, plan_id: str) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a"), _spec("b", "a"), _spec("c", "b")])
    done = store.update_task(plan_id, "a", 0, status="succeeded", summary="found it")
    assert done is not None
    assert store.update_task(plan_id, "b", 0, status="failed", error="boom") is not None
    version = store.replace_open_tasks(
        plan_id, "v2", [_spec("a", title="rewritten"), _spec("e", "a"), _spec("d", "e")]
    )
    assert version == 2
    assert _plan(store, plan_id).goal == "v2"
    assert sorted(_ids(store, plan_id)) == ["a", "d", "e"]
    assert _task(store, plan_id, "a") == done
    assert [t.id for t in store.tasks(plan_id) if t.id != "a"] == ["e", "d"]
    assert _task(store, plan_id, "e").status == "pending"


def test_a_failed_replan_changes_nothing(store: Store, plan_id: str) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a"), _spec("b")])
    before = store.tasks(plan_id)
    broken = {k: v for k, v in _spec("z").items() if k != "title"}
    with pytest.raises(KeyError):
        store.replace_open_tasks(plan_id, "v2", [_spec("c"), broken])
    assert store.tasks(plan_id) == before
    assert (_plan(store, plan_id).version, _plan(store, plan_id).goal) == (1, "v1")
    assert not store.conn.in_transaction


def test_a_replan_joins_an_outer_transaction(store: Store, plan_id: str) -> None:
    with store.transaction():
        store.replace_open_tasks(plan_id, "v1", [_spec("a")])
        store.set_plan_status(plan_id, "running")
    assert _ids(store, plan_id) == ["a"]
    assert _plan(store, plan_id).status == "running"


def test_a_task_update_applies_the_changes_and_bumps_the_version(
    store: Store, plan_id: str
) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a"), _spec("b")])
    updated = store.update_task(
        plan_id,
        "b",
        0,
        status="running",
        attempt=1,
        stalled=True,
        depends_on=["a"],
        tokens_in=10,
        cost=0.25,
        sub_thread_id="sub",
    )
    assert updated is not None
    assert updated == _task(store, plan_id, "b")
    assert (updated.status, updated.attempt, updated.version) == ("running", 1, 1)
    assert (updated.stalled, updated.depends_on) == (True, ("a",))
    assert (updated.tokens_in, updated.cost, updated.sub_thread_id) == (10, 0.25, "sub")
    assert updated.title == "Task b"
    assert _task(store, plan_id, "a").version == 0


def test_a_task_update_at_a_stale_version_is_refused(store: Store, plan_id: str) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a")])
    assert store.update_task(plan_id, "a", 0, status="running") is not None
    assert store.update_task(plan_id, "a", 0, status="cancelled") is None
    assert store.update_task(plan_id, "missing", 0, status="running") is None
    assert _task(store, plan_id, "a").status == "running"


def test_of_two_writers_at_the_same_version_exactly_one_wins(
    open_store: Callable[..., Store], store: Store, plan_id: str
) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a")])
    other = open_store()
    seen = _task(other, plan_id, "a").version
    assert seen == _task(store, plan_id, "a").version
    winner = store.update_task(plan_id, "a", seen, status="succeeded", summary="done")
    loser = other.update_task(plan_id, "a", seen, status="cancelled")
    assert winner is not None
    assert loser is None
    final = _task(other, plan_id, "a")
    assert (final.status, final.summary, final.version) == ("succeeded", "done", seen + 1)
    assert final.final


@pytest.mark.parametrize("field", ["version", "id", "final", "colour"])
def test_a_task_update_with_an_unknown_field_raises(store: Store, plan_id: str, field: str) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a")])
    with pytest.raises(ValueError, match=field):
        store.update_task(plan_id, "a", 0, status="running", **{field: 1})
    assert _task(store, plan_id, "a").status == "pending"


def test_deleting_the_thread_deletes_its_plans_tasks_and_envelopes(
    store: Store, thread_id: str, plan_id: str
) -> None:
    store.replace_open_tasks(plan_id, "v1", [_spec("a")])
    store.put_envelope("e1", thread_id, sender="a", receiver="lead", kind="result", payload={})
    store.delete_thread(thread_id)
    assert store.get_plan(plan_id) is None
    assert store.tasks(plan_id) == []
    assert store.envelopes(thread_id) == []


# the outbox


def _put(store: Store, envelope_id: str, thread_id: str, **kwargs: Any) -> None:
    defaults: dict[str, Any] = {
        "sender": "task-a",
        "receiver": "coordinator",
        "kind": "result",
        "payload": {"text": envelope_id},
    }
    store.put_envelope(envelope_id, thread_id, **{**defaults, **kwargs})


def test_an_envelope_reads_back_as_written(store: Store, thread_id: str) -> None:
    _put(
        store,
        "e1",
        thread_id,
        plan_id="p1",
        task_id="a",
        payload={"summary": "ok", "n": [1, 2]},
        artifacts=["out/report.md"],
        reply_to="e0",
        created_at=5.0,
    )
    [envelope] = store.envelopes(thread_id)
    assert (envelope.id, envelope.thread_id, envelope.plan_id, envelope.task_id) == (
        "e1",
        thread_id,
        "p1",
        "a",
    )
    assert (envelope.sender, envelope.receiver, envelope.kind) == (
        "task-a",
        "coordinator",
        "result",
    )
    assert envelope.payload == {"summary": "ok", "n": [1, 2]}
    assert envelope.artifacts == ("out/report.md",)
    assert (envelope.reply_to, envelope.created_at, envelope.acked_at) == ("e0", 5.0, None)


def test_putting_the_same_envelope_twice_stores_it_once(store: Store, thread_id: str) -> None:
    _put(store, "e1", thread_id, payload={"first": True})
    _put(store, "e1", thread_id, payload={"first": False})
    [envelope] = store.envelopes(thread_id)
    assert envelope.payload == {"first": True}
    assert store.conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0] == 1


def test_unacked_envelopes_come_in_creation_order_and_filter_by_plan(
    store: Store, thread_id: str
) -> None:
    other_thread = store.create_thread("other").id
    _put(store, "late", thread_id, plan_id="p1", created_at=3.0)
    _put(store, "early", thread_id, plan_id="p1", created_at=1.0)
    _put(store, "p2", thread_id, plan_id="p2", created_at=2.0)
    _put(store, "planless", thread_id, created_at=4.0)
    _put(store, "elsewhere", other_thread, plan_id="p1", created_at=0.5)
    assert [e.id for e in store.unacked_envelopes(thread_id)] == ["early", "p2", "late", "planless"]
    assert [e.id for e in store.unacked_envelopes(thread_id, "p1")] == ["early", "late"]
    assert [e.id for e in store.unacked_envelopes(thread_id, "p2")] == ["p2"]


def test_an_envelope_is_acked_once(store: Store, thread_id: str) -> None:
    _put(store, "e1", thread_id, plan_id="p1")
    _put(store, "e2", thread_id, plan_id="p1")
    assert store.ack_envelope("e1") is True
    assert store.ack_envelope("e1") is False
    assert store.ack_envelope("missing") is False
    assert [e.id for e in store.unacked_envelopes(thread_id, "p1")] == ["e2"]
    acked = {e.id: e.acked_at for e in store.envelopes(thread_id)}
    assert acked["e1"] is not None
    assert acked["e2"] is None


# sub-threads and autonomy


def test_sub_threads_are_hidden_from_the_thread_list(store: Store, thread_id: str) -> None:
    child = store.create_thread("child", parent_id=thread_id, thread_id="child-1")
    assert child.id == "child-1"
    assert [t.id for t in store.list_threads()] == [thread_id]
    assert store.get_thread(child.id).parent_id == thread_id
    assert store.get_thread(thread_id).parent_id is None


def test_a_created_sub_thread_reads_back_as_created(store: Store, thread_id: str) -> None:
    child = store.create_thread("child", parent_id=thread_id)
    assert child == store.get_thread(child.id)


def test_sub_threads_are_found_at_any_depth(store: Store, thread_id: str) -> None:
    child = store.create_thread("child", parent_id=thread_id).id
    grandchild = store.create_thread("grandchild", parent_id=child).id
    sibling = store.create_thread("sibling", parent_id=thread_id).id
    unrelated = store.create_thread("unrelated").id
    assert sorted(store.sub_threads(thread_id)) == sorted([child, grandchild, sibling])
    assert store.sub_threads(child) == [grandchild]
    assert store.sub_threads(grandchild) == []
    assert store.sub_threads(unrelated) == []


def test_deleting_a_thread_deletes_its_sub_threads(store: Store, thread_id: str) -> None:
    child = store.create_thread("child", parent_id=thread_id).id
    grandchild = store.create_thread("grandchild", parent_id=child).id
    store.add_message(grandchild, "user", "hello")
    store.delete_thread(thread_id)
    assert not store.has_thread(child)
    assert not store.has_thread(grandchild)
    assert store.conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0


def test_a_sub_thread_needs_an_existing_parent(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.create_thread("orphan", parent_id="missing")


def test_threads_start_supervised_and_can_be_made_autonomous(store: Store, thread_id: str) -> None:
    other = store.create_thread("other").id
    assert store.is_autonomous(thread_id) is False
    store.set_autonomous(thread_id, True)
    assert store.is_autonomous(thread_id) is True
    assert store.is_autonomous(other) is False
    store.set_autonomous(thread_id, False)
    assert store.is_autonomous(thread_id) is False
    assert store.is_autonomous("missing") is False


# migration from schema version 1

_V1_THREADS = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('schema_version', '1');
CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'idle',
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
INSERT INTO threads(id, title, status, last_error, created_at, updated_at)
VALUES ('old', 'Written by version 1', 'failed', 'model unreachable', 10.0, 20.0);
"""


def _columns(store: Store, table: str) -> set[str]:
    return {row[1] for row in store.conn.execute(f"PRAGMA table_info({table})")}


def test_a_version_1_database_is_migrated_in_place_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    conn = sqlite3.connect(path)
    conn.executescript(_V1_THREADS)
    conn.close()

    db = open_database(path)
    try:
        store = Store(db)
        assert {"parent_id", "autonomous"} <= _columns(store, "threads")
        old = store.get_thread("old")
        assert (old.title, old.status, old.last_error) == (
            "Written by version 1",
            "failed",
            "model unreachable",
        )
        assert (old.created_at, old.updated_at, old.parent_id) == (10.0, 20.0, None)
        assert [t.id for t in store.list_threads()] == ["old"]
        assert store.is_autonomous("old") is False
        version = store.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == str(SCHEMA_VERSION)

        child = store.create_thread("child", parent_id="old").id
        store.create_plan("p1", child, "goal", None)
        store.delete_thread("old")
        assert not store.has_thread(child)
        assert store.get_plan("p1") is None
    finally:
        db.close()


def test_opening_a_current_database_again_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = open_database(path)
    store = Store(db)
    parent = store.create_thread("parent").id
    store.create_thread("child", parent_id=parent)
    store.set_autonomous(parent, True)
    db.close()

    db = open_database(path)
    try:
        store = Store(db)
        assert [t.id for t in store.list_threads()] == [parent]
        assert len(store.sub_threads(parent)) == 1
        assert store.is_autonomous(parent) is True
    finally:
        db.close()


def test_a_version_2_database_gains_optional_tasks_keeping_its_plans(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = open_database(path)
    store = Store(db)
    thread = store.create_thread("t").id
    store.create_plan("p1", thread, "goal", None)
    spec = {"id": "a", "title": "A", "objective": "do a", "profile": "general"}
    store.replace_open_tasks("p1", "goal", [{**spec, "depends_on": [], "success_criteria": ""}])
    db.close()
    # As version 2 wrote it: no `optional` column.
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE tasks DROP COLUMN optional")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()

    db = open_database(path)
    try:
        store = Store(db)
        assert "optional" in _columns(store, "tasks")
        [task] = store.tasks("p1")
        assert (task.id, task.objective, task.optional) == ("a", "do a", False)
        version = store.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'")
        assert version.fetchone()[0] == str(SCHEMA_VERSION)
    finally:
        db.close()
