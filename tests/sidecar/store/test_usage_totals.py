"""A thread's usage totals are kept as its turns are recorded (one row read per turn, however
long the thread), match the sum of its turns, drop what a deleted thread had, and are filled
from the turns already recorded when a database from before them is opened."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from sidecar.store import Store, open_database
from sidecar.store.context import ContextRepo, UsageTotals


def _record(contexts: ContextRepo, thread_id: str, n: int, cost: float | None) -> None:
    contexts.record_usage(
        f"{thread_id}-{n}",
        thread_id,
        model="m",
        prompt_tokens=100 + n,
        completion_tokens=n,
        cost=cost,
    )


def _summed(contexts: ContextRepo, thread_id: str) -> UsageTotals:
    turns = contexts.usage(thread_id)
    costs = [t.cost for t in turns if t.cost is not None]
    return UsageTotals(
        sum(t.prompt_tokens for t in turns),
        sum(t.completion_tokens for t in turns),
        sum(costs) if costs else None,
    )


def test_totals_are_the_sum_of_the_turns(open_store: Callable[..., Store]) -> None:
    store = open_store()
    priced, unpriced = store.create_thread("a").id, store.create_thread("b").id
    for n in range(300):
        _record(store.contexts, priced, n, 0.25 if n % 3 else None)
        _record(store.contexts, unpriced, n, None)
    _record(store.contexts, priced, 0, 0.25)  # recorded again: written once, counted once

    for thread in (priced, unpriced):
        assert store.contexts.usage_totals(thread) == _summed(store.contexts, thread)
    assert store.contexts.usage_totals(unpriced).cost is None
    assert store.contexts.usage_totals("no such thread") == UsageTotals()


def test_a_deleted_thread_leaves_no_usage(open_store: Callable[..., Store]) -> None:
    store = open_store()
    thread = store.create_thread("a").id
    _record(store.contexts, thread, 1, 0.5)

    store.delete_thread(thread)

    assert store.contexts.usage_totals(thread) in (UsageTotals(), UsageTotals(0, 0, None))


def test_turns_recorded_before_the_totals_existed_are_counted(db_path: Path) -> None:
    db = open_database(db_path)
    store = Store(db)
    thread = store.create_thread("a").id
    for n in range(5):
        _record(store.contexts, thread, n, 0.5)
    expected = store.contexts.usage_totals(thread)
    # A database of an earlier release: the turns, no totals.
    db.conn.execute("DROP TABLE thread_usage_totals")
    db.conn.execute("DELETE FROM meta WHERE key = 'thread_usage_totals'")
    db.conn.commit()
    db.close()

    reopened = Store(open_database(db_path))

    assert reopened.contexts.usage_totals(thread) == expected == UsageTotals(510, 10, 2.5)
    reopened.db.close()


@pytest.mark.parametrize("turns", [1, 3])
def test_totals_grow_with_each_turn(open_store: Callable[..., Store], turns: int) -> None:
    store = open_store()
    thread = store.create_thread("a").id
    for n in range(turns):
        _record(store.contexts, thread, n, None)
        assert store.contexts.usage_totals(thread) == _summed(store.contexts, thread)
