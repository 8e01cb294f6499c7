"""The MCP servers' stores, opened on the sidecar's one connection.

The memory tiers (`mcp_servers.memory.MemoryStore`) and the schedule book
(`mcp_servers.schedule.ScheduleBook`) run standalone too, so they keep their own SQL; inside
Atrium they share this file and its single writer, and their tables are versioned with the
rest (`sidecar.store.schema`). The memory package imports LangGraph's store, so it is imported
here only when the memory is first opened, never at start-up.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_servers.schedule import ScheduleBook
from sidecar.store.history import HistoryRepo
from sidecar.store.schema import MEMORY, VECTORS, ensure
from sidecar.store.vectors import VectorRepo

if TYPE_CHECKING:
    from mcp_servers.memory import MemoryStore


def open_memory(conn: sqlite3.Connection) -> MemoryStore:
    """The memory tiers in the one database: sources are checked against the thread's
    messages, and an agent's memory must name one.

    Raises:
        NewerSchemaError: another process wrote a newer version of the memory tables.
    """
    from mcp_servers.memory import MemoryStore

    messages = HistoryRepo(conn)

    def check(thread: str, message: str) -> bool:
        return messages.message_seq(message, thread) is not None

    memory = MemoryStore(conn, source_check=check, require_source=True)
    ensure(conn, MEMORY)
    return memory


def open_vectors(memory: MemoryStore) -> VectorRepo:
    """The vectors of `memory`'s rows, on its connection (their table is made now: only with
    an embedding model configured).

    Raises:
        NewerSchemaError: another process wrote a newer version of the vector table.
    """
    ensure(memory.conn, VECTORS)
    return VectorRepo(memory.conn)


def open_schedule_book(
    conn: sqlite3.Connection,
    *,
    default_timezone: str,
    now: Callable[[], float] = time.time,
    changed: Callable[[], None] = lambda: None,
) -> ScheduleBook:
    """The schedule book on the sidecar's connection (its tables were made at open)."""
    return ScheduleBook(conn, default_timezone=default_timezone, now=now, changed=changed)
