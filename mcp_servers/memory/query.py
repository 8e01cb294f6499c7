"""Author or model text → a safe FTS5 query.

FTS5 has its own query language (`"`, `*`, `NEAR(`, `AND`, `-`, column filters); text typed by
a person is not meant in it, and a stray quote makes SQLite raise. So the text is cut into
words (letters and digits only), common words are dropped, and each remaining word is quoted and
the words are OR-ed: any text gives a query that parses, ranked by bm25.
"""

from __future__ import annotations

import re

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
