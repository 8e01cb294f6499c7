"""A thread's whole history: pages by seq cursor, full-text search, and a safe query sanitizer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from sidecar.store import Store, open_database
from sidecar.store.history import MAX_QUERY_TERMS, fts_query


def _seed(store: Store, thread_id: str, count: int) -> list[str]:
    return [
        store.add_message(thread_id, "user" if n % 2 else "assistant", f"message {n} word{n}").id
        for n in range(count)
    ]


def test_pages_walk_from_the_newest_to_the_first_message_without_gaps(store: Store) -> None:
    thread = store.create_thread("long")
    ids = _seed(store, thread.id, 1050)
    seen: list[str] = []
    page = store.messages_page(thread.id, limit=200)
    assert not page.has_newer
    while True:
        seen[:0] = [record.id for _, record in page.messages]
        if not page.has_older:
            break
        page = store.messages_page(thread.id, before_seq=page.messages[0][0], limit=200)
        assert page.has_newer
    assert seen == ids
    assert len(page.messages) == 50


def test_a_page_after_a_seq_walks_forward_and_says_what_lies_either_side(store: Store) -> None:
    thread = store.create_thread("t")
    _seed(store, thread.id, 10)
    first = store.messages_page(thread.id, before_seq=None, limit=3)
    oldest = store.messages_page(thread.id, after_seq=0, limit=3)
    assert [r.content for _, r in oldest.messages] == [f"message {n} word{n}" for n in range(3)]
    assert (oldest.has_older, oldest.has_newer) == (False, True)
    after = store.messages_page(thread.id, after_seq=oldest.messages[-1][0], limit=100)
    assert len(after.messages) == 7
    assert (after.has_older, after.has_newer) == (True, False)
    assert first.messages == after.messages[-3:]


def test_pages_of_an_empty_or_unknown_thread_are_empty(store: Store) -> None:
    thread = store.create_thread("empty")
    for thread_id in (thread.id, "no-such-thread"):
        page = store.messages_page(thread_id)
        assert (page.messages, page.has_older, page.has_newer) == ((), False, False)


def test_search_finds_a_word_in_one_thread_newest_first_with_a_snippet(store: Store) -> None:
    thread, other = store.create_thread("a"), store.create_thread("b")
    store.add_message(thread.id, "user", "the quick brown fox")
    store.add_message(other.id, "user", "a fox in another thread")
    store.add_message(thread.id, "assistant", "no match here")
    store.add_message(thread.id, "assistant", "Foxes? The fox jumps over the lazy dog")
    hits = store.search_messages("fox", thread_id=thread.id)
    assert [h.content for h in hits] == [
        "Foxes? The fox jumps over the lazy dog",
        "the quick brown fox",
    ]
    assert hits[0].seq > hits[1].seq and hits[0].thread_id == thread.id
    assert "fox" in hits[1].snippet
    assert len(store.search_messages("fox")) == 3


def test_search_leaves_out_tool_results_unless_asked(store: Store) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "tool", "needle in a tool result", tool_call_id="c1")
    assert store.search_messages("needle", thread_id=thread.id) == []
    hits = store.search_messages("needle", thread_id=thread.id, roles=("tool",))
    assert [h.role for h in hits] == ["tool"]


def test_search_pages_newest_first_with_before_seq(store: Store) -> None:
    thread = store.create_thread("t")
    for n in range(30):
        store.add_message(thread.id, "user", f"common {n}")
    first = store.search_messages("common", thread_id=thread.id, limit=10)
    second = store.search_messages(
        "common", thread_id=thread.id, limit=10, before_seq=first[-1].seq
    )
    assert [h.content for h in first + second] == [f"common {n}" for n in range(29, 9, -1)]


def test_search_by_relevance_and_any_term(store: Store) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "user", "apples and pears")
    store.add_message(thread.id, "user", "pears pears pears")
    store.add_message(thread.id, "user", "apples")
    assert store.search_messages("apples pears", thread_id=thread.id) != []
    assert len(store.search_messages("apples pears", thread_id=thread.id)) == 1
    any_hits = store.search_messages("apples pears", thread_id=thread.id, any_term=True)
    assert len(any_hits) == 3
    ranked = store.search_messages("pears", thread_id=thread.id, order="relevance")
    assert ranked[0].content == "pears pears pears"


def test_the_last_word_matches_as_a_prefix_while_it_is_typed(store: Store) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "user", "searching the transcript")
    assert [h.content for h in store.search_messages("transc", thread_id=thread.id)] == [
        "searching the transcript"
    ]


@pytest.mark.parametrize(
    "text",
    [
        '"',
        '"unbalanced',
        "fox*",
        "*",
        "NEAR(fox dog)",
        "NEAR(",
        "-fox",
        "fox -dog",
        "content:fox",
        "col:umn: weird",
        "fox AND OR NOT",
        "(fox",
        "^fox",
        "fox + dog",
        "{content}: fox",
        "'; DROP TABLE messages; --",
        "\x00fox",
    ],
)
def test_author_text_with_query_syntax_never_raises_and_finds_the_words(
    store: Store, text: str
) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "user", "fox and dog, NEAR the content: col umn weird AND OR NOT")
    hits = store.search_messages(text, thread_id=thread.id)
    assert len(hits) <= 1
    if "fox" in text:
        assert len(hits) == 1
    assert store.messages_page(thread.id).messages


def test_word_less_queries_find_nothing(store: Store) -> None:
    thread = store.create_thread("t")
    store.add_message(thread.id, "user", "anything")
    for text in ("", "   ", '"" * - : ( )', "…"):
        assert store.search_messages(text, thread_id=thread.id) == []
        assert fts_query(text) is None


def test_the_sanitizer_quotes_each_term_and_caps_their_number() -> None:
    assert fts_query('say "hi" NEAR(x') == '"say" "hi" "NEAR" "x"*'
    assert fts_query("a b", any_term=True) == '"a" OR "b"*'
    assert fts_query(" ".join(f"w{n}" for n in range(50))) is not None
    query = fts_query(" ".join(f"w{n}" for n in range(50)))
    assert query is not None and query.count('"') == 2 * MAX_QUERY_TERMS


def test_the_index_follows_deletes_and_edits_of_messages(store: Store) -> None:
    thread = store.create_thread("t")
    message = store.add_message(thread.id, "user", "original words")
    store.conn.execute("UPDATE messages SET content = 'edited text' WHERE id = ?", (message.id,))
    assert store.search_messages("original") == []
    assert len(store.search_messages("edited")) == 1
    store.delete_thread(thread.id)
    assert store.search_messages("edited") == []
    integrity = "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
    store.conn.execute(integrity)


def test_a_database_from_before_the_index_is_backfilled_when_opened(
    db_path: Path, open_store: Callable[..., Store]
) -> None:
    store = open_store()
    thread = store.create_thread("old")
    store.add_message(thread.id, "user", "written before the search index existed")
    store.conn.executescript(
        "DROP TRIGGER messages_fts_after_insert; DROP TRIGGER messages_fts_after_delete;"
        " DROP TRIGGER messages_fts_after_update; DROP TABLE messages_fts;"
    )
    store.db.close()
    reopened = Store(open_database(db_path))
    try:
        assert [h.content for h in reopened.search_messages("existed")] == [
            "written before the search index existed"
        ]
        reopened.conn.execute(
            "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
        )
    finally:
        reopened.db.close()


def test_search_in_20000_messages_finds_one_word(store: Store) -> None:
    thread = store.create_thread("huge")
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
            (
                (f"m{n}", thread.id, "user", f"message number {n} filler text", float(n))
                for n in range(20_000)
            ),
        )
        store.conn.execute("UPDATE messages SET content = 'the zebra is here' WHERE id = 'm17'")
    hits = store.search_messages("zebra", thread_id=thread.id)
    assert [h.message_id for h in hits] == ["m17"]
    page = store.messages_page(thread.id, before_seq=hits[0].seq + 1, limit=5)
    assert page.messages[-1][1].id == "m17"
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO messages(id, thread_id, role, content, created_at) VALUES (?,?,?,?,?)",
            ("m17", thread.id, "user", "dup", 0.0),
        )
