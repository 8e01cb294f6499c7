"""The memory store: tiers as namespaces, provenance, FTS search that any text can query."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

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
