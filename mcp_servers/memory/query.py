"""Author or model text → a safe FTS5 query.

FTS5 has its own query language (`"`, `*`, `NEAR(`, `AND`, `-`, column filters); text typed by
a person is not meant in it, and a stray quote makes SQLite raise. So the text is cut into
words (letters and digits only), common words are dropped, and each remaining word is quoted and
the words are OR-ed: any text gives a query that parses, ranked by bm25.
"""

from __future__ import annotations

import re
import sqlite3

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 24

_STOPWORDS = """a an and are as at be been but by can could did do does for from had has have
    he her hers
    him his how i if in into is it its just me my no not of on or our ours she so than that the
    their them then there these they this those to too us was we were what when where which who
    whom why will with would you your yours about again also any all am each few more most other
    some such only own same very s t don should now ok okay please tell say said"""
STOPWORDS = frozenset(_STOPWORDS.split())


def fts_query(text: str, *, max_terms: int = MAX_TERMS) -> str | None:
    """The FTS5 MATCH expression for `text`, or None when it holds no searchable word."""
    terms: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        if word not in terms:
            terms.append(word)
        if len(terms) >= max_terms:
            break
    if not terms:
        return None
    return " OR ".join(f'"{term}"' for term in terms)


def terms_of(text: str, *, max_terms: int = MAX_TERMS) -> list[str]:
    """The searchable words of `text` (lower case, no common words, no repeats)."""
    match = fts_query(text, max_terms=max_terms)
    return [] if match is None else [t.strip('"') for t in match.split(" OR ")]


def selective_terms(
    conn: sqlite3.Connection,
    table: str,
    terms: list[str],
    *,
    common: int = 1000,
    keep_common: bool = True,
) -> list[str]:
    """The terms of `terms` that match fewer than `common` rows of FTS5 table `table`.

    Ranking an OR query scores every row any of its terms matches: one word found in every
    memory makes a search read them all. Such words say little about relevance anyway, so they
    are left out when rarer ones remain (when none does, all are kept, or, without
    `keep_common`, none: a table that grows without bound, such as a thread's messages, is not
    worth reading whole for them). Each probe reads at most `common` row ids from the index.
    """
    rare: list[str] = []
    for term in terms:
        row = conn.execute(
            f"SELECT COUNT(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? LIMIT ?)",
            (f'"{term}"', common),
        ).fetchone()
        if int(row[0]) < common:
            rare.append(term)
    return rare or (terms if keep_common else [])
