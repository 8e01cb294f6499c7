"""Memories in LangGraph's `SqliteStore`, one namespace per tier and scope, with FTS5 search.

Namespaces are `("memory", tier, scope_id)`: `thread` (one conversation), `channel` (a named
group of threads), `workspace` (the workspace folder) and `account` (the author, everywhere).
Each item's value carries its text and provenance: tier, source (thread, message id), who wrote
it (agent or author), when, and whether it is pinned.

Search: the store's own `search` ranks text only through embeddings (off unless configured), so
memories get their own FTS5 table, `memory_fts`, kept in step with the store's rows by triggers.
Triggers run inside the store's own write transaction, so the index never disagrees with the
rows, whichever process wrote them. `recursive_triggers` is switched on for the connection
because the store upserts with `INSERT OR REPLACE`, whose implicit delete fires delete triggers
only with it on.

Two processes may write one file at once (two standalone servers on one file). LangGraph's
store is not made for that, in two places, and each has its mend here:

- Its write transactions start with a deferred `BEGIN`. The first statement then reads (FTS5
  loads its configuration, a fresh connection loads the schema) before it writes, and SQLite
  answers a read transaction that must become a write transaction after another process
  committed with "database is locked" at once, without waiting on the busy timeout. The store
  here (`_ImmediateStore`) begins every transaction with `BEGIN IMMEDIATE`, which takes the write
  lock first and so waits its turn.
- `SqliteStore.setup` reads the migration version and applies migrations in separate statements,
  so two processes setting up one new file both apply migration 0 and one fails on
  `store_migrations`' key; switching a new file to WAL at the same moment can also answer
  "database is locked" at once. `MemoryStore.open` sets up under the file lock of
  `mcp_servers.shared_file`.

tests/mcp_servers/memory/test_store.py pins both reasons: its tests fail when LangGraph's store
begins with `BEGIN IMMEDIATE` or sets up atomically, and then the mend can go.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, cast, get_args

from langgraph.store.base import PutOp
from langgraph.store.sqlite import SqliteStore  # pyright: ignore[reportMissingTypeStubs]

from ..shared_file import setting_up
from .errors import MemoryErrorCode, MemoryRefusal
from .query import selective_terms, terms_of

Tier = Literal["thread", "channel", "workspace", "account"]
Author = Literal["agent", "author"]
TIERS: tuple[Tier, ...] = get_args(Tier)
ROOT = "memory"
MAX_TEXT_CHARS = 8_000
ACCOUNT_ID = "me"

MEMORY_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    text, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memory_fts_insert AFTER INSERT ON store
WHEN new.prefix GLOB '{ROOT}.*' BEGIN
    INSERT INTO memory_fts(rowid, text) VALUES (new.rowid, json_extract(new.value, '$.text'));
END;
CREATE TRIGGER IF NOT EXISTS memory_fts_delete AFTER DELETE ON store
WHEN old.prefix GLOB '{ROOT}.*' BEGIN
    DELETE FROM memory_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER IF NOT EXISTS memory_fts_update AFTER UPDATE OF value ON store
WHEN new.prefix GLOB '{ROOT}.*' BEGIN
    DELETE FROM memory_fts WHERE rowid = old.rowid;
    INSERT INTO memory_fts(rowid, text) VALUES (new.rowid, json_extract(new.value, '$.text'));
END;
CREATE INDEX IF NOT EXISTS memory_pinned ON store(prefix)
WHERE json_extract(value, '$.pinned') = 1;
"""


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a turn stands: its thread, the thread's channel, the workspace, the account."""

    thread: str | None = None
    channel: str | None = None
    workspace: str | None = None

    def scope_id(self, tier: Tier) -> str:
        """The namespace segment of `tier` for this scope.

        Raises:
            MemoryRefusal: `no_scope` when this scope has no such tier (e.g. no channel).
        """
        value = {"thread": self.thread, "channel": self.channel, "workspace": self.workspace}.get(
            tier, ACCOUNT_ID
        )
        if not value:
            raise MemoryRefusal(MemoryErrorCode.NO_SCOPE, f"this conversation has no {tier}")
        if tier == "thread":
            return value.replace(".", "_")
        return value if tier == "account" else _short_hash(value)

    def prefix(self, tier: Tier) -> str:
        return f"{ROOT}.{tier}.{self.scope_id(tier)}"

    def prefixes(self) -> dict[str, Tier]:
        """Every namespace this scope can see, as store prefix → tier."""
        found: dict[str, Tier] = {}
        for tier in TIERS:
            try:
                found[self.prefix(tier)] = tier
            except MemoryRefusal:
                continue
        return found


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory and its provenance."""

    key: str
    tier: Tier
    text: str
    by: Author
    created_at: float
    updated_at: float
    pinned: bool = False
    source_thread: str | None = None
    source_message: str | None = None
    scope_label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_FIELDS = tuple(f.name for f in fields(Memory))


def check_tier(tier: str) -> Tier:
    """Raises:
    MemoryRefusal: `unknown_tier`."""
    if tier not in TIERS:
        known = ", ".join(TIERS)
        raise MemoryRefusal(MemoryErrorCode.UNKNOWN_TIER, f"unknown tier {tier!r} ({known})")
    return tier


def check_text(text: str) -> str:
    """Raises:
    MemoryRefusal: `empty_text` or `too_long`."""
    cleaned = text.strip()
    if not cleaned:
        raise MemoryRefusal(MemoryErrorCode.EMPTY_TEXT, "a memory needs some text")
    if len(cleaned) > MAX_TEXT_CHARS:
        raise MemoryRefusal(
            MemoryErrorCode.TOO_LONG,
            f"a memory holds at most {MAX_TEXT_CHARS} characters (got {len(cleaned)}); "
            "save the fact, not the document",
        )
    return cleaned


SourceCheck = Callable[[str, str], bool]


class _ImmediateStore(SqliteStore):
    """`SqliteStore` whose transactions begin with `BEGIN IMMEDIATE` (see the module docstring).

    Same body as `SqliteStore._cursor` but for the `BEGIN` it issues."""

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Generator[sqlite3.Cursor]:
        if not self.is_setup:
            self.setup()
        with self.lock:
            if transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.cursor()
            try:
                yield cur
            finally:
                if transaction:
                    self.conn.execute("COMMIT")
                cur.close()


class MemoryStore:
    """The memory tiers on one SQLite connection (the caller's, or one opened with `open`).

    `source_check(thread, message)` says whether a message of that id exists in that thread;
    with it, a write naming a source that does not exist is refused (`forged_source`), and with
    `require_source` an agent's write must name one.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        source_check: SourceCheck | None = None,
        require_source: bool = False,
    ) -> None:
        self.conn = conn
        self.store = _ImmediateStore(conn)
        self.store.setup()
        conn.execute("PRAGMA recursive_triggers = ON")
        conn.executescript(MEMORY_SCHEMA)
        self._source_check = source_check
        self._require_source = require_source

    @classmethod
    def open(cls, path: Path, *, busy_timeout_ms: int = 30_000) -> MemoryStore:
        """A store on its own connection to `path` (WAL; writers wait for each other).

        Set-up runs under `setting_up`'s file lock, so processes opening one file at once take
        turns (see the module docstring).

        Raises:
            filelock.Timeout: the lock was not granted within the busy timeout (an `OSError`).
            sqlite3.DatabaseError: `path` is not a database.
        """
        with setting_up(path, busy_timeout_ms=busy_timeout_ms) as conn:
            return cls(conn, source_check=messages_source_check(conn))

    def close(self) -> None:
        self.conn.close()

    # -- writes ---------------------------------------------------------------------------------

    def write(
        self,
        scope: Scope,
        tier: str,
        text: str,
        *,
        by: Author = "agent",
        source_message: str | None = None,
        pinned: bool = False,
        key: str | None = None,
    ) -> Memory:
        """Save a memory in `tier` of `scope`. With `key`, writing again replaces it (a retried
        flush writes the same memory once).

        Raises:
            MemoryRefusal: unknown tier, empty or too long text, forged or missing source.
        """
        checked = check_tier(tier)
        body = check_text(text)
        prefix = scope.prefix(checked)
        self.check_source(scope.thread, source_message, by)
        now = time.time()
        memory = Memory(
            key=key or f"m_{uuid.uuid4().hex[:20]}",
            tier=checked,
            text=body,
            by=by,
            created_at=now,
            updated_at=now,
            pinned=pinned,
            source_thread=scope.thread if source_message or by == "agent" else None,
            source_message=source_message,
            scope_label=_label(scope, checked),
        )
        self._put(prefix, memory)
        return memory

    def update(
        self,
        key: str,
        *,
        text: str | None = None,
        pinned: bool | None = None,
        tier: str | None = None,
        scope: Scope | None = None,
    ) -> Memory:
        """Change a memory's text or pin, or move it to another tier of `scope`.

        Raises:
            MemoryRefusal: `not_found`, or the checks of `write`.
        """
        prefix, memory = self._find(key)
        changes: dict[str, Any] = {"updated_at": time.time()}
        if text is not None:
            changes["text"] = check_text(text)
        if pinned is not None:
            changes["pinned"] = pinned
        new_prefix = prefix
        if tier is not None and tier != memory.tier:
            checked = check_tier(tier)
            if scope is None:
                raise MemoryRefusal(MemoryErrorCode.NO_SCOPE, "moving a memory needs a scope")
            new_prefix = scope.prefix(checked)
            changes.update(tier=checked, scope_label=_label(scope, checked))
        updated = replace(memory, **changes)
        ops = [PutOp(_namespace(new_prefix), key, _value(updated), index=False)]
        if new_prefix != prefix:
            ops.insert(0, PutOp(_namespace(prefix), key, None))
        self.store.batch(ops)
        return updated

    def forget(self, key: str) -> Memory:
        """Delete a memory (its text leaves the search index with it).

        Raises:
            MemoryRefusal: `not_found`.
        """
        prefix, memory = self._find(key)
        self.store.delete(_namespace(prefix), key)
        return memory

    def _put(self, prefix: str, memory: Memory) -> None:
        self.store.put(_namespace(prefix), memory.key, _value(memory), index=False)

    def check_source(self, thread: str | None, message: str | None, by: Author) -> None:
        """Raises:
        MemoryRefusal: `forged_source` for a source message not in `thread` (or a missing one
        where sources are required)."""
        if message is None:
            if self._require_source and by == "agent":
                raise MemoryRefusal(
                    MemoryErrorCode.FORGED_SOURCE, "an agent's memory must name its source message"
                )
            return
        check = self._source_check
        if check is not None and (thread is None or not check(thread, message)):
            raise MemoryRefusal(
                MemoryErrorCode.FORGED_SOURCE,
                f"no message {message!r} in this conversation: a memory's source must be real",
            )

    # -- reads ----------------------------------------------------------------------------------

    def read(self, key: str) -> Memory:
        """Raises:
        MemoryRefusal: `not_found`."""
        return self._find(key)[1]

    def visible(self, key: str, scope: Scope) -> Memory:
        """A memory `scope` may see (another thread's thread-tier memory is not found).

        Raises:
            MemoryRefusal: `not_found`.
        """
        prefix, memory = self._find(key)
        if prefix not in scope.prefixes():
            raise MemoryRefusal(MemoryErrorCode.NOT_FOUND, f"no memory {key!r} here")
        return memory

    def _find(self, key: str) -> tuple[str, Memory]:
        row = self.conn.execute(
            "SELECT prefix, value FROM store WHERE key = ? AND prefix GLOB ?", (key, f"{ROOT}.*")
        ).fetchone()
        if row is None:
            raise MemoryRefusal(MemoryErrorCode.NOT_FOUND, f"no memory {key!r}")
        return str(row[0]), _memory(row[1])

    def recent(
        self,
        scope: Scope,
        tiers: Sequence[str] | None = None,
        *,
        limit: int = 50,
        pinned_only: bool = False,
    ) -> list[Memory]:
        """Memories of `scope` (all its tiers, or `tiers`), newest first."""
        prefixes = self._prefixes(scope, tiers)
        if not prefixes:
            return []
        marks = ",".join("?" * len(prefixes))
        pinned = " AND json_extract(value, '$.pinned') = 1" if pinned_only else ""
        rows = self.conn.execute(
            f"SELECT value FROM store WHERE prefix IN ({marks}){pinned}"
            " ORDER BY rowid DESC LIMIT ?",
            (*prefixes, limit),
        ).fetchall()
        return [_memory(r[0]) for r in rows]

    def pinned(self, scope: Scope) -> list[Memory]:
        """Every pinned memory `scope` sees, oldest first (a stable order turn after turn)."""
        prefixes = list(scope.prefixes())
        marks = ",".join("?" * len(prefixes))
        rows = self.conn.execute(
            f"SELECT value FROM store WHERE prefix IN ({marks})"
            " AND json_extract(value, '$.pinned') = 1 ORDER BY rowid",
            prefixes,
        ).fetchall()
        return sorted((_memory(r[0]) for r in rows), key=lambda m: (m.created_at, m.key))

    def search(
        self, scope: Scope, query: str, *, tiers: Sequence[str] | None = None, limit: int = 10
    ) -> list[Memory]:
        """The memories of `scope` that best match `query` (bm25); any text is a valid query."""
        terms = selective_terms(self.conn, "memory_fts", terms_of(query))
        prefixes = self._prefixes(scope, tiers)
        if not terms or not prefixes:
            return []
        match = " OR ".join(f'"{term}"' for term in terms)
        marks = ",".join("?" * len(prefixes))
        rows = self.conn.execute(
            "SELECT s.value FROM memory_fts f JOIN store s ON s.rowid = f.rowid"
            f" WHERE memory_fts MATCH ? AND s.prefix IN ({marks})"
            " ORDER BY bm25(memory_fts) LIMIT ?",
            (match, *prefixes, limit),
        ).fetchall()
        return [_memory(r[0]) for r in rows]

    def count(self, scope: Scope | None = None) -> int:
        if scope is None:
            row = self.conn.execute(
                "SELECT COUNT(*) FROM store WHERE prefix GLOB ?", (f"{ROOT}.*",)
            ).fetchone()
        else:
            prefixes = list(scope.prefixes())
            marks = ",".join("?" * len(prefixes))
            row = self.conn.execute(
                f"SELECT COUNT(*) FROM store WHERE prefix IN ({marks})", prefixes
            ).fetchone()
        return int(row[0])

    def _prefixes(self, scope: Scope, tiers: Iterable[str] | None) -> list[str]:
        if tiers is None:
            return list(scope.prefixes())
        return [scope.prefix(check_tier(t)) for t in tiers if _has(scope, t)]


def _has(scope: Scope, tier: str) -> bool:
    try:
        scope.prefix(check_tier(tier))
    except MemoryRefusal as exc:
        if exc.code is MemoryErrorCode.UNKNOWN_TIER:
            raise
        return False
    return True


def _label(scope: Scope, tier: Tier) -> str:
    labels = {"thread": scope.thread, "channel": scope.channel, "workspace": scope.workspace}
    return labels.get(tier) or ACCOUNT_ID


def _namespace(prefix: str) -> tuple[str, ...]:
    return tuple(prefix.split("."))


def _value(memory: Memory) -> dict[str, Any]:
    return memory.to_dict()


def _memory(raw: str | bytes) -> Memory:
    data = cast(dict[str, Any], json.loads(raw))
    return Memory(**{name: data[name] for name in _FIELDS if name in data})


def messages_source_check(conn: sqlite3.Connection) -> SourceCheck | None:
    """Sources checked against the `messages` table when the file has one (Atrium's database);
    None for a file of memories alone (a standalone server's), where sources are recorded as the
    client gives them."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'"
    ).fetchone()
    if row is None:
        return None

    def check(thread: str, message: str) -> bool:
        found = conn.execute(
            "SELECT 1 FROM messages WHERE id = ? AND thread_id = ?", (message, thread)
        ).fetchone()
        return found is not None

    return check
