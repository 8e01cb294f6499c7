"""Memories in LangGraph's `SqliteStore`, one namespace per tier and scope, with FTS5 search.

Namespaces are `("memory", tier, scope_id)`: `thread` (one conversation), `channel` (a named
group of threads), `workspace` (the workspace folder) and `account` (the author, everywhere).
Each item's value carries its text and provenance: tier, source (thread, message id), who wrote
it and from what (`Provenance`: the author; the agent from the author's own words; the agent
after reading untrusted content), whether the author has reviewed what the agent saved, when,
and whether it is pinned. A row written before provenance existed reads with the provenance its
`by` implies (`author`, or for the agent `agent_after_untrusted`: what it had read is unknown),
and `add_provenance` writes that into such rows once (the schema registry's memory step).

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
Provenance = Literal["author", "agent_from_author", "agent_after_untrusted"]
"""Where a memory's current text came from: the author wrote it (the Memory panel, an explicit
author command); the agent saved it from the author's own words, in a turn that had read nothing
untrusted; or the agent saved it in a turn that had read tool output, files, the web or other
agents' results."""
TIERS: tuple[Tier, ...] = get_args(Tier)
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
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


def _provenance_sql(value: str = "value") -> str:
    """A row's provenance in SQL, also for a row written before provenance was recorded."""
    return (
        f"COALESCE(json_extract({value}, '$.provenance'), CASE json_extract({value}, '$.by')"
        " WHEN 'author' THEN 'author' ELSE 'agent_after_untrusted' END)"
    )


def _unreviewed_sql(value: str = "value") -> str:
    """The filter of `unreviewed`: saved by the agent, not yet kept or changed by the author."""
    return (
        f" AND {_provenance_sql(value)} != 'author'"
        f" AND COALESCE(json_extract({value}, '$.reviewed'), 0) = 0"
    )


def add_provenance(conn: sqlite3.Connection) -> None:
    """Record the provenance of every memory written before it was recorded (once; a row that
    has one is left alone): the author's stay `author`; the agent's become
    `agent_after_untrusted`, not reviewed, since what that turn had read is unknown, so they
    wait in the Memory panel's review list and are treated as untrusted until the author keeps
    them."""
    conn.execute(
        "UPDATE store SET value = json_set(value, '$.provenance', "
        f"{_provenance_sql()}, '$.reviewed', json('false'))"
        " WHERE prefix GLOB ? AND json_extract(value, '$.provenance') IS NULL",
        (f"{ROOT}.*",),
    )


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
    provenance: Provenance = "agent_after_untrusted"
    reviewed: bool = False

    @property
    def unreviewed(self) -> bool:
        """Saved or changed by the agent, and not yet kept or edited by the author."""
        return self.provenance != "author" and not self.reviewed

    @property
    def untrusted(self) -> bool:
        """Saved by the agent after reading untrusted content, and not reviewed: its text may
        carry instructions someone else wrote."""
        return self.provenance == "agent_after_untrusted" and not self.reviewed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def author_of(provenance: Provenance) -> Author:
    """Who wrote a memory of this provenance (the `by` every release reads)."""
    return "author" if provenance == "author" else "agent"


def provenance_of(by: str, provenance: Provenance | None = None) -> Provenance:
    """`provenance`, or the one `by` implies when it is not known: an agent's memory of
    unknown origin counts as saved after untrusted content."""
    if provenance is not None:
        return provenance
    return "author" if by == "author" else "agent_after_untrusted"


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
        provenance: Provenance | None = None,
        reviewed: bool = False,
        source_message: str | None = None,
        pinned: bool = False,
        key: str | None = None,
    ) -> Memory:
        """Save a memory in `tier` of `scope`. With `key`, writing again replaces it (a retried
        flush writes the same memory once). `provenance` says where its text came from (and
        decides `by`); without it, `by` decides (an agent's memory then counts as saved after
        untrusted content: a caller that cannot say what the agent read must not vouch).

        Raises:
            MemoryRefusal: unknown tier, empty or too long text, forged or missing source.
        """
        checked = check_tier(tier)
        body = check_text(text)
        prefix = scope.prefix(checked)
        origin = provenance_of(by, provenance)
        writer = author_of(origin)
        self.check_source(scope.thread, source_message, writer)
        now = time.time()
        memory = Memory(
            key=key or f"m_{uuid.uuid4().hex[:20]}",
            tier=checked,
            text=body,
            by=writer,
            created_at=now,
            updated_at=now,
            pinned=pinned,
            source_thread=scope.thread if source_message or writer == "agent" else None,
            source_message=source_message,
            scope_label=_label(scope, checked),
            provenance=origin,
            reviewed=reviewed,
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
        provenance: Provenance | None = None,
        reviewed: bool | None = None,
        source_message: str | None = None,
    ) -> Memory:
        """Change a memory's text or pin, or move it to another tier of `scope`; mark it
        reviewed (or not).

        `provenance` is who made this change (the memory takes it; `by` follows). New text
        always gets a provenance: without one it counts as the agent's after untrusted content,
        so a rewrite never keeps the label of the text it replaced. `source_message` (in
        `scope`'s thread) replaces the memory's source with the change's.

        Raises:
            MemoryRefusal: `not_found`, or the checks of `write`.
        """
        prefix, memory = self._find(key)
        changes: dict[str, Any] = {"updated_at": time.time()}
        if text is not None:
            changes["text"] = check_text(text)
            provenance = provenance or "agent_after_untrusted"
        if provenance is not None:
            changes.update(provenance=provenance, by=author_of(provenance))
            # The agent's change waits for the author's review like a new memory would.
            changes["reviewed"] = provenance == "author" or bool(reviewed)
        if reviewed is not None:
            changes["reviewed"] = reviewed
        if source_message is not None and scope is not None:
            self.check_source(scope.thread, source_message, author_of(provenance or "author"))
            changes.update(source_thread=scope.thread, source_message=source_message)
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
        unreviewed: bool = False,
    ) -> list[Memory]:
        """Memories of `scope` (all its tiers, or `tiers`), newest first; `unreviewed`: only
        those the agent saved or changed that the author has not reviewed."""
        prefixes = self._prefixes(scope, tiers)
        if not prefixes:
            return []
        marks = ",".join("?" * len(prefixes))
        pinned = " AND json_extract(value, '$.pinned') = 1" if pinned_only else ""
        pinned += _unreviewed_sql() if unreviewed else ""
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
        self,
        scope: Scope,
        query: str,
        *,
        tiers: Sequence[str] | None = None,
        limit: int = 10,
        unreviewed: bool = False,
    ) -> list[Memory]:
        """The memories of `scope` that best match `query` (bm25); any text is a valid query.
        `unreviewed` as in `recent`."""
        terms = selective_terms(self.conn, "memory_fts", terms_of(query))
        prefixes = self._prefixes(scope, tiers)
        if not terms or not prefixes:
            return []
        match = " OR ".join(f'"{term}"' for term in terms)
        marks = ",".join("?" * len(prefixes))
        review = _unreviewed_sql("s.value") if unreviewed else ""
        rows = self.conn.execute(
            "SELECT s.value FROM memory_fts f JOIN store s ON s.rowid = f.rowid"
            f" WHERE memory_fts MATCH ? AND s.prefix IN ({marks}){review}"
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
    known = {name: data[name] for name in _FIELDS if name in data}
    if known.get("provenance") not in PROVENANCES:
        known["provenance"] = provenance_of(str(data.get("by", "agent")))
    return Memory(**known)


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
