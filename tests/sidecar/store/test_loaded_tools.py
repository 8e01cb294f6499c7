"""A thread's loaded tools: newest first, loaded again moves up, kept across a reopened file,
gone with their thread."""

from __future__ import annotations

from collections.abc import Callable

from sidecar.store import Store


def test_tools_come_back_newest_first_and_a_tool_loaded_again_moves_up(store: Store) -> None:
    thread = store.create_thread("t")
    store.loaded_tools.load_tools(thread.id, ["suite__c", "suite__b", "suite__a"], "found")
    assert store.loaded_tools.loaded_tools(thread.id) == ["suite__a", "suite__b", "suite__c"]
    store.loaded_tools.load_tools(thread.id, ["suite__c"], "named")
    assert store.loaded_tools.loaded_tools(thread.id) == ["suite__c", "suite__a", "suite__b"]
    assert store.loaded_tools.loaded_tools(thread.id, limit=2) == ["suite__c", "suite__a"]


def test_each_thread_has_its_own_tools_and_an_unknown_thread_loads_none(store: Store) -> None:
    one, two = store.create_thread("one"), store.create_thread("two")
    store.loaded_tools.load_tools(one.id, ["suite__a"], "found")
    store.loaded_tools.load_tools(two.id, ["suite__b"], "named")
    store.loaded_tools.load_tools("no-such-thread", ["suite__c"], "named")
    assert store.loaded_tools.loaded_tools(one.id) == ["suite__a"]
    assert store.loaded_tools.loaded_tools(two.id) == ["suite__b"]
    assert store.loaded_tools.loaded_tools("no-such-thread") == []


def test_loaded_tools_outlive_the_connection_and_go_with_their_thread(
    open_store: Callable[..., Store],
) -> None:
    store = open_store()
    thread = store.create_thread("t")
    store.loaded_tools.load_tools(thread.id, ["suite__a", "suite__b"], "found")
    store.db.close()
    reopened = open_store()
    assert reopened.loaded_tools.loaded_tools(thread.id) == ["suite__b", "suite__a"]
    reopened.delete_thread(thread.id)
    rows = reopened.conn.execute("SELECT COUNT(*) FROM loaded_tools").fetchone()[0]
    assert rows == 0
