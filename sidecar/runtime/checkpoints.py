"""LangGraph's checkpoint tables, in the same SQLite file and on the same connection as the
store.

One connection is the single-writer discipline: two connections would each hold SQLite's write
lock in turn, and a synchronous store write waiting on the event-loop thread for an async
saver's commit (scheduled on that same loop) deadlocks until the busy timeout fires. Checkpoint
reads and writes here are small, so running them inline on the loop thread is cheaper than
hopping to a worker thread.

Why a subclass: LangGraph's `SqliteSaver` raises NotImplementedError from its async methods (the
graph runs async), and `AsyncSqliteSaver` needs its own aiosqlite connection.
tests/sidecar/runtime/test_checkpoints.py fails when `SqliteSaver` gains an async API; then
this subclass can go.
"""

# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false
# pyright: reportUnknownParameterType=false, reportUnknownVariableType=false
# pyright: reportUnknownArgumentType=false, reportIncompatibleMethodOverride=false
# (langgraph's checkpoint base types are only partly annotated)

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from sidecar.store import Database


class InlineSqliteSaver(SqliteSaver):
    """`SqliteSaver` whose async API runs the sync implementation inline."""

    async def aget_tuple(self, config: Any) -> Any:
        return self.get_tuple(config)

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[Any]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)


def open_checkpointer(db: Database | sqlite3.Connection) -> InlineSqliteSaver:
    """The saver on the database's own connection, its tables made where missing."""
    saver = InlineSqliteSaver(db.conn if isinstance(db, Database) else db)
    saver.setup()
    return saver
