"""The schema registry: every table in the database file, each owner's tables versioned.

A `SchemaPart` is one owner's tables: Atrium's own (the conversation and everything the sidecar
records about it), the schedule book's, the memory tiers' and the memory vectors'. Each part
names its concepts' DDL in creation order, has a version recorded in `meta` under its key, and
the steps that bring an older file up to that version. Parts version apart because they change
apart: the memory and schedule servers also run standalone on a file of their own.

Opening the file checks every part's recorded version first (a file written by a newer Atrium
is refused before anything is touched), then brings each part that is made at open up to date.
The memory and vector parts are made when first used (`ensure`): the memory tiers live in
LangGraph's store, which start-up does not import, and the vectors exist only with an embedding
model configured.

Bringing a part up to date: its tables are created where missing (`IF NOT EXISTS`), each step
then changes what an older file already had (in its own transaction, with the version it
reached recorded in the same one), and last its indexes are made (an index may name a column a
step added).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcp_servers.schedule import SCHEDULE_SCHEMA, add_unattended
from sidecar.store.approvals import APPROVAL_SCHEMA
from sidecar.store.budgets import BUDGET_SCHEMA
from sidecar.store.context import CONTEXT_SCHEMA
from sidecar.store.grants import GRANT_SCHEMA
from sidecar.store.heartbeat import HEARTBEAT_SCHEMA
from sidecar.store.history import MESSAGE_SCHEMA, create_message_index
from sidecar.store.interrupts import INTERRUPT_SCHEMA
from sidecar.store.journal import JOURNAL_SCHEMA
from sidecar.store.loaded_tools import LOADED_TOOL_SCHEMA
from sidecar.store.outbox import OUTBOX_SCHEMA
from sidecar.store.plan_grants import PLAN_GRANT_SCHEMA
from sidecar.store.plans import PLAN_SCHEMA
from sidecar.store.queue import QUEUE_SCHEMA
from sidecar.store.runs import RUN_SCHEMA
from sidecar.store.threads import THREAD_INDEXES, THREAD_SCHEMA
from sidecar.store.unattended import UNATTENDED_SCHEMA
from sidecar.store.uncertain import UNCERTAIN_SCHEMA
from sidecar.store.undo import UNDO_SCHEMA
from sidecar.store.vectors import VECTOR_SCHEMA

Step = Callable[[sqlite3.Connection], None]
Ddl = str | Step
"""A DDL script (idempotent: `IF NOT EXISTS`), or a function for DDL that also fills what it
made (a full-text index over rows that existed before it)."""

META_SCHEMA = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"


@dataclass(frozen=True, slots=True)
class SchemaPart:
    """One owner's tables, versioned together.

    `probe` names a table whose presence in a file with no recorded version for this part
    means the file was written before the part recorded one: it is at version 1. None (Atrium's
    own part) applies `stored_version`'s rule instead.
    """

    name: str
    version: int
    key: str
    tables: Mapping[str, Ddl]
    steps: Mapping[int, Step] = field(default_factory=dict[int, Step])
    indexes: tuple[str, ...] = ()
    probe: str | None = None
    at_open: bool = True


class NewerSchemaError(RuntimeError):
    """The database was written by a newer Atrium; this one will not touch it."""

    def __init__(
        self, path: Path, found: int, *, part: str = "atrium", known: int | None = None
    ) -> None:
        known = SCHEMA_VERSION if known is None else known
        what = "database schema" if part == "atrium" else f"{part} schema"
        super().__init__(
            f"{path} was written by a newer Atrium ({what} {found}; this version "
            f"reads up to {known}). Update Atrium, or set ATRIUM_DATA_DIR to another "
            "folder. Nothing was changed."
        )
        self.path = path
        self.found = found
        self.part = part


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Sub-threads and autonomy: two columns on threads."""
    for column, definition in (
        ("parent_id", "TEXT REFERENCES threads(id) ON DELETE CASCADE"),
        ("autonomous", "INTEGER NOT NULL DEFAULT 0"),
    ):
        if column not in _columns(conn, "threads"):
            conn.execute(f"ALTER TABLE threads ADD COLUMN {column} {definition}")


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Optional plan tasks: one column on tasks (created with it when the table is new)."""
    if "tasks" in _tables(conn) and "optional" not in _columns(conn, "tasks"):
        conn.execute("ALTER TABLE tasks ADD COLUMN optional INTEGER NOT NULL DEFAULT 0")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """Queued messages remember their lane (a schedule's prompt queued behind a busy thread
    still runs in the cron lane)."""
    tables = _tables(conn)
    if "queued_messages" in tables and "lane" not in _columns(conn, "queued_messages"):
        conn.execute("ALTER TABLE queued_messages ADD COLUMN lane TEXT NOT NULL DEFAULT 'main'")


def _memory_tables(conn: sqlite3.Connection) -> None:
    """The memories' full-text index, over LangGraph's store rows (`MemoryStore` sets those
    up first). Imported here, not at start-up: the memory package imports LangGraph's store."""
    from mcp_servers.memory import MEMORY_SCHEMA

    conn.executescript(MEMORY_SCHEMA)


def _memory_v1_to_v2(conn: sqlite3.Connection) -> None:
    """Memories record their provenance (author; agent from the author's words; agent after
    untrusted content) and whether the author reviewed them: older rows get the one their
    `by` implies (`mcp_servers.memory.add_provenance`)."""
    from mcp_servers.memory import add_provenance

    add_provenance(conn)


ATRIUM = SchemaPart(
    name="atrium",
    version=4,
    key="schema_version",
    tables={
        "meta": META_SCHEMA,
        "threads": THREAD_SCHEMA,
        "messages": MESSAGE_SCHEMA,
        "runs": RUN_SCHEMA,
        "interrupts": INTERRUPT_SCHEMA,
        "grants": GRANT_SCHEMA,
        "journal": JOURNAL_SCHEMA,
        "approvals": APPROVAL_SCHEMA,
        "plans": PLAN_SCHEMA,
        "outbox": OUTBOX_SCHEMA,
        "plan_grants": PLAN_GRANT_SCHEMA,
        "queue": QUEUE_SCHEMA,
        "heartbeat": HEARTBEAT_SCHEMA,
        "history": create_message_index,
        "uncertain": UNCERTAIN_SCHEMA,
        "context": CONTEXT_SCHEMA,
        "budgets": BUDGET_SCHEMA,
        "unattended": UNATTENDED_SCHEMA,
        "loaded_tools": LOADED_TOOL_SCHEMA,
        "undo": UNDO_SCHEMA,
    },
    # Step `v` brings the part from version v to v + 1. Tables new in a version need no step
    # (creating what is missing makes them); a step changes what already exists.
    steps={1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4},
    indexes=(THREAD_INDEXES,),
)
"""Atrium's own tables. Its key is the one every release since 0.1.0 reads first."""

SCHEDULES = SchemaPart(
    name="schedule",
    version=2,
    key="schema_version.schedule",
    tables={"schedules": SCHEDULE_SCHEMA},
    # 1 -> 2: each schedule's policy for a question nobody answers (`wait` for those before).
    steps={1: add_unattended},
    probe="schedules",
)

MEMORY = SchemaPart(
    name="memory",
    version=2,
    key="schema_version.memory",
    tables={"memory": _memory_tables},
    steps={1: _memory_v1_to_v2},
    probe="memory_fts",
    at_open=False,
)

VECTORS = SchemaPart(
    name="vectors",
    version=1,
    key="schema_version.vectors",
    tables={"vectors": VECTOR_SCHEMA},
    probe="memory_vectors",
    at_open=False,
)

REGISTRY: tuple[SchemaPart, ...] = (ATRIUM, SCHEDULES, MEMORY, VECTORS)

SCHEMA_VERSION = ATRIUM.version


def stored_version(conn: sqlite3.Connection) -> int | None:
    """The schema version the file says it has; None for a new, empty file. A file with tables
    but no version (written before versions were recorded) counts as version 1."""
    tables = _tables(conn)
    if not tables:
        return None
    if "meta" not in tables:
        return 1
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return 1
    try:
        return int(row[0])
    except ValueError:
        return 1


def recorded_version(conn: sqlite3.Connection, part: SchemaPart) -> int | None:
    """The version of `part` the file has; None where the file has none of its tables."""
    if part.probe is None:
        return stored_version(conn)
    tables = _tables(conn)
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (part.key,)).fetchone()
        if row is not None:
            try:
                return int(row[0])
            except ValueError:
                return 1
    return 1 if part.probe in tables else None


def check_versions(conn: sqlite3.Connection, path: Path) -> dict[str, int | None]:
    """Every part's recorded version, by name.

    Raises:
        NewerSchemaError: a part was written by a newer version (nothing was changed).
    """
    found = {part.name: recorded_version(conn, part) for part in REGISTRY}
    for part in REGISTRY:
        version = found[part.name]
        if version is not None and version > part.version:
            raise NewerSchemaError(path, version, part=part.name, known=part.version)
    return found


def apply(conn: sqlite3.Connection, part: SchemaPart, found: int | None) -> None:
    """Bring `part` from version `found` (None: the file has none of it) up to date, in place,
    losing nothing."""
    for ddl in part.tables.values():
        if isinstance(ddl, str):
            conn.executescript(ddl)
        else:
            ddl(conn)
    version = part.version if found is None else found
    while version < part.version:
        step = part.steps.get(version)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if step is not None:
                step(conn)
            version += 1
            _record(conn, part, version)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    for ddl in part.indexes:
        conn.execute(ddl)
    _record(conn, part, part.version)


def ensure(conn: sqlite3.Connection, part: SchemaPart) -> None:
    """Bring a part made on first use up to date (its owner calls this before using it); a
    part already recorded at this version is left as it is.

    Raises:
        NewerSchemaError: another process wrote a newer version of the part since the file
            was opened.
    """
    found = recorded_version(conn, part)
    if found is not None and found > part.version:
        path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
        raise NewerSchemaError(path, found, part=part.name, known=part.version)
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (part.key,)).fetchone()
    if row is None or found != part.version:
        apply(conn, part, found)


def _record(conn: sqlite3.Connection, part: SchemaPart, version: int) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (part.key, str(version)),
    )
