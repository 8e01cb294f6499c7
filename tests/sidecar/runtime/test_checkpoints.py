"""Why `InlineSqliteSaver` exists, as tests: when one of them fails, the reason for the subclass
is gone and it can be replaced by the library's own saver."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from sidecar.runtime.checkpoints import open_checkpointer

CONFIG = {"configurable": {"thread_id": "t-1", "checkpoint_ns": ""}}


@pytest.mark.anyio
async def test_upstream_sqlite_saver_still_has_no_async_api_on_a_shared_connection(
    tmp_path: Path,
) -> None:
    """The graph runs async and needs `aget_tuple`/`aput`; LangGraph's `SqliteSaver` still
    refuses them (pointing at `AsyncSqliteSaver`, which needs its own aiosqlite connection and
    would break the one-writer discipline). If this fails, drop the subclass."""
    saver = SqliteSaver(sqlite3.connect(tmp_path / "a.db", check_same_thread=False))
    saver.setup()
    with pytest.raises(NotImplementedError):
        await saver.aget_tuple(CONFIG)


@pytest.mark.anyio
async def test_the_inline_saver_answers_the_async_api_on_the_stores_connection(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "a.db", isolation_level=None, check_same_thread=False)
    saver = open_checkpointer(conn)
    assert await saver.aget_tuple(CONFIG) is None
    assert [item async for item in saver.alist(CONFIG)] == []
    assert saver.conn is conn
