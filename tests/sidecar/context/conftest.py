"""A real database with the memory tiers on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.context.parts import MemoryDeps, build_memory_deps
from sidecar.store import Store, open_database


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = open_database(tmp_path / "atrium.db")
    yield Store(db)
    db.close()


@pytest.fixture
def mem(store: Store) -> MemoryDeps:
    return build_memory_deps(store)
