"""A real SQLite file per test, and a clock that makes timestamps strictly increase."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from sidecar.store import Store, grants, history, interrupts, journal, open_database, runs, threads


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "atrium.db"


@pytest.fixture
def open_store(db_path: Path) -> Iterator[Callable[..., Store]]:
    """Opens stores on the test's database file; every one is closed afterwards."""
    opened: list[Store] = []

    def open_(**kwargs: int) -> Store:
        store = Store(open_database(db_path, **kwargs))
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.db.close()


@pytest.fixture
def store(open_store: Callable[..., Store]) -> Store:
    return open_store()


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each timestamp the store takes is one second after the last, so orderings by time are
    deterministic."""
    ticks = itertools.count(1_000_000.0)
    fake = SimpleNamespace(time=lambda: next(ticks))
    for module in (threads, history, runs, interrupts, grants, journal):
        monkeypatch.setattr(module, "time", fake)
