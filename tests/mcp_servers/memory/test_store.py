"""The memory store: tiers as namespaces, provenance, FTS search that any text can query."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph.store.sqlite import SqliteStore  # pyright: ignore[reportMissingTypeStubs]

from mcp_servers.memory import MemoryErrorCode, MemoryRefusal, MemoryStore, Scope, fts_query

HERE = Scope(thread="t1", channel="novel", workspace="/books/river")
OTHER_THREAD = Scope(thread="t2", channel="novel", workspace="/books/river")
OTHER_WORKSPACE = Scope(thread="t3", workspace="/books/sea")


def test_each_tier_is_seen_only_from_its_own_scope(store: MemoryStore) -> None:
    for tier in ("thread", "channel", "workspace", "account"):
        store.write(HERE, tier, f"the {tier} word is quokka{tier}")
    seen = {
        m.tier
        for m in store.search(HERE, "quokkathread quokkachannel quokkaworkspace quokkaaccount")
    }
    assert seen == {"thread", "channel", "workspace", "account"}
    other = {
        m.tier
        for m in store.search(
            OTHER_THREAD, "quokkathread quokkachannel quokkaworkspace quokkaaccount"
        )
    }
    assert other == {"channel", "workspace", "account"}
    far = {
        m.tier
        for m in store.search(
            OTHER_WORKSPACE, "quokkathread quokkachannel quokkaworkspace quokkaaccount"
        )
    }
    assert far == {"account"}


def test_a_memory_records_its_tier_source_author_and_time(store: MemoryStore) -> None:
    memory = store.write(
        HERE, "workspace", "  The editor is Zofia.  ", source_message="m1", by="agent"
    )
    got = store.read(memory.key)
    assert (got.tier, got.text, got.by) == ("workspace", "The editor is Zofia.", "agent")
    assert (got.source_thread, got.source_message) == ("t1", "m1")
    assert got.created_at == got.updated_at > 0


@pytest.mark.parametrize(
    ("tier", "text", "code"),
    [
        ("galaxy", "a fact", MemoryErrorCode.UNKNOWN_TIER),
        ("thread", "   ", MemoryErrorCode.EMPTY_TEXT),
        ("thread", "x" * 1_000_000, MemoryErrorCode.TOO_LONG),
        ("channel", "a fact", MemoryErrorCode.NO_SCOPE),
    ],
)
def test_a_bad_write_is_refused_with_its_code_and_stores_nothing(
    store: MemoryStore, tier: str, text: str, code: MemoryErrorCode
) -> None:
    with pytest.raises(MemoryRefusal) as refused:
        store.write(Scope(thread="t1", workspace="/w"), tier, text)
    assert refused.value.code is code
    assert store.count() == 0


@pytest.mark.parametrize(
    "query",
    [
        '"',
        'editor"',
        "edi*",
        "NEAR(editor zofia",
        "editor AND OR NOT",
        "-zofia",
        "col:editor",
        "^",
        "",
        "()",
        "'; DROP TABLE store; --",
    ],
)
def test_search_with_fts_syntax_characters_never_raises(store: MemoryStore, query: str) -> None:
    store.write(HERE, "workspace", "The editor is Zofia Quintanilla-Brandt")
    found = store.search(HERE, query)
    assert all(m.text.startswith("The editor") for m in found)


def test_the_sanitized_query_quotes_words_and_drops_common_ones() -> None:
    assert fts_query('Who is my "editor" NEAR( zofia*') == '"editor" OR "near" OR "zofia"'
    assert fts_query("the of and") is None


def test_search_ranks_the_best_match_first_and_stems_words(store: MemoryStore) -> None:
    store.write(HERE, "workspace", "The manuscript is due on March 3")
    store.write(HERE, "workspace", "The author prefers tea")
    store.write(HERE, "workspace", "Editing happens in March; the manuscript editor is Zofia")
    found = store.search(HERE, "when are manuscripts due?")
    assert found[0].text == "The manuscript is due on March 3"


def test_update_forget_and_move_keep_the_search_index_in_step(store: MemoryStore) -> None:
    memory = store.write(HERE, "thread", "The dragon is called Ember")
    store.update(memory.key, text="The dragon is called Cinder")
    assert [m.text for m in store.search(HERE, "ember")] == []
    assert [m.text for m in store.search(HERE, "cinder")] == ["The dragon is called Cinder"]
    store.update(memory.key, tier="account", scope=HERE)
    assert [m.tier for m in store.search(OTHER_WORKSPACE, "cinder")] == ["account"]
    store.forget(memory.key)
    assert store.search(HERE, "cinder") == []
    index_rows = store.conn.execute("SELECT COUNT(*) FROM memory_fts").fetchone()[0]
    assert index_rows == 0


def test_pinned_memories_come_in_a_stable_order(store: MemoryStore) -> None:
    first = store.write(HERE, "workspace", "Always write in British English", pinned=True)
    store.write(HERE, "workspace", "not pinned")
    second = store.write(HERE, "account", "The author's name is Ada", pinned=True)
    store.update(first.key, text="Always write in British English, please")
    assert [m.key for m in store.pinned(HERE)] == [first.key, second.key]


def test_a_forged_source_is_refused_where_messages_are_known(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "atrium.db", isolation_level=None)
    conn.execute("CREATE TABLE messages (id TEXT PRIMARY KEY, thread_id TEXT)")
    conn.execute("INSERT INTO messages VALUES ('m1', 't1'), ('m2', 't2')")
    conn.close()
    store = MemoryStore.open(tmp_path / "atrium.db")
    store.write(HERE, "thread", "real source", source_message="m1")
    for forged in ("m404", "m2"):  # unknown, and another thread's message
        with pytest.raises(MemoryRefusal) as refused:
            store.write(HERE, "thread", "forged source", source_message=forged)
        assert refused.value.code is MemoryErrorCode.FORGED_SOURCE
    assert store.count() == 1
    store.close()


def test_an_agent_write_without_a_source_is_refused_when_sources_are_required(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    store = MemoryStore(conn, require_source=True)
    with pytest.raises(MemoryRefusal) as refused:
        store.write(HERE, "thread", "no source", by="agent")
    assert refused.value.code is MemoryErrorCode.FORGED_SOURCE
    assert store.write(HERE, "thread", "typed by the author", by="author").source_message is None


def test_ten_thousand_memories_search_within_their_scope(store: MemoryStore) -> None:
    scopes = [Scope(thread=f"t{i}", workspace=f"/w{i % 10}") for i in range(100)]
    for i in range(10_000):
        store.write(scopes[i % 100], "thread" if i % 2 else "workspace", f"fact {i} about item{i}")
    found = store.search(scopes[7], "item7 item107 item8")
    assert {m.text for m in found} == {"fact 7 about item7", "fact 107 about item107"}
    assert store.count() == 10_000


def _open_and_write(path: str, name: str, start: Any) -> str | None:
    """Child process: wait for the others, open the shared file, write 25 memories."""
    start.wait(60)
    try:
        store = MemoryStore.open(Path(path))
        try:
            for i in range(25):
                store.write(Scope(), "account", f"{name} fact {i}", by="author")
        finally:
            store.close()
    except Exception as exc:  # reported to the parent, which names it in the failure
        return f"{name}: {type(exc).__name__}: {exc}"
    return None


@pytest.mark.slow
def test_processes_opening_and_writing_one_new_file_at_once_lose_nothing(tmp_path: Path) -> None:
    """Six rounds of four processes opening one new file at the same moment and writing at once:
    every open and every write succeeds and the file is whole. Without the mends of
    mcp_servers/memory/store.py most rounds lose a process to "database is locked" or to the
    store's migration key."""
    context = multiprocessing.get_context("fork")
    for round_no in range(6):
        path = tmp_path / f"round{round_no}" / "memory.db"
        with context.Manager() as manager:
            start = manager.Barrier(4)
            with context.Pool(4) as pool:
                results = pool.starmap(
                    _open_and_write, [(str(path), f"p{i}", start) for i in range(4)]
                )
        assert [r for r in results if r] == []
        store = MemoryStore.open(path)
        try:
            texts = {m.text for m in store.recent(Scope(), ["account"], limit=1000)}
            assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            store.close()
        assert texts == {f"p{i} fact {n}" for i in range(4) for n in range(25)}


def test_the_stores_own_transactions_begin_deferred(tmp_path: Path) -> None:
    """Why memories go through `_ImmediateStore`: LangGraph's store begins a write with a plain
    `BEGIN`. When this fails, it takes the write lock first and the subclass can go."""
    conn = sqlite3.connect(tmp_path / "memory.db", isolation_level=None, check_same_thread=False)
    store = SqliteStore(conn)
    store.setup()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    store.put(("memory",), "k", {"text": "a fact"})
    conn.set_trace_callback(None)
    conn.close()
    assert "BEGIN" in statements
    assert not any(s.startswith("BEGIN IMMEDIATE") for s in statements)


class _PausingConnection:
    """A connection that runs `between` right after the store reads its migration version."""

    def __init__(self, conn: sqlite3.Connection, between: Callable[[], None]) -> None:
        self._conn = conn
        self._between = between

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, *args)
        if sql.lstrip().startswith("SELECT v FROM store_migrations"):
            between, self._between = self._between, lambda: None
            between()
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_the_stores_own_setup_is_not_safe_for_two_processes(tmp_path: Path) -> None:
    """Why `MemoryStore.open` holds a set-up lock: `SqliteStore.setup` reads the migration version
    and applies migrations in separate statements, so a second set-up in between makes the first
    fail. When this stops failing, the store's set-up is atomic and the lock can go."""
    path = tmp_path / "memory.db"

    def other_process_sets_up() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        SqliteStore(other).setup()
        other.close()

    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    first = SqliteStore(cast(sqlite3.Connection, _PausingConnection(conn, other_process_sets_up)))
    with pytest.raises(sqlite3.IntegrityError, match="store_migrations"):
        first.setup()
    conn.close()
