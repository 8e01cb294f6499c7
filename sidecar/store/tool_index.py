"""A full-text index of tool definitions, for `atrium__tool_search` (`sidecar.context.tool_search`).

An FTS5 table in a private in-memory database, built once per set of tools and then only read:
it is derived from what the servers list, so nothing of it belongs in the database file. FTS5
ranks with BM25 over three columns, weighted: the tool's name (and its server's), its
description and its parameters' names, each split into words (`create_invoice`,
`createInvoice` and `create-invoice` are "create invoice"); the Porter stemmer lets "invoices"
find "invoice". The server is also a facet: a search may keep to some servers, and says how many
matches each server has.

Building and searching are blocking calls (a worker thread runs them): the connection is made
for use from any thread, one call at a time, and closed when the index is dropped.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sidecar.store.history import fts_query

WEIGHTS = (4.0, 1.0, 2.0)
"""BM25 weights of the name, description and parameters columns: a word of the name says
more about what a tool does than a word of its prose."""

_SCHEMA = """
CREATE VIRTUAL TABLE tools USING fts5(
    name, description, parameters, server UNINDEXED, tool UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\W_]+")


def words(text: str) -> str:
    """`text` as space-separated words: identifiers split at `_`, `-`, `.` and case changes."""
    return " ".join(_SEPARATORS.split(_CAMEL.sub(" ", text))).strip()


@dataclass(frozen=True, slots=True)
class ToolDocument:
    """What the index knows of one tool: `name` is `server__tool`."""

    name: str
    server: str
    description: str
    parameters: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexHit:
    """A matching tool; `rank` is FTS5's weighted BM25 (lower is better)."""

    name: str
    server: str
    rank: float


@dataclass(frozen=True, slots=True)
class IndexResult:
    """The best matches, and how many matches each server has (the facets), most first."""

    hits: tuple[IndexHit, ...]
    facets: tuple[tuple[str, int], ...] = field(default=())


class ToolIndex:
    """An FTS5 index over a fixed set of tools (build a new one when the set changes)."""

    def __init__(self, documents: Iterable[ToolDocument]) -> None:
        """Index `documents` (blocking: run it off the event loop)."""
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        # Closed when the index is dropped, not before: a search may still hold it.
        weakref.finalize(self, self._conn.close)
        self._conn.executescript(_SCHEMA)
        self._conn.executemany(
            "INSERT INTO tools(name, description, parameters, server, tool) VALUES (?,?,?,?,?)",
            (
                (
                    f"{words(d.server)} {words(d.name.partition('__')[2] or d.name)}",
                    d.description,
                    " ".join(words(p) for p in d.parameters),
                    d.server,
                    d.name,
                )
                for d in documents
            ),
        )
        self._conn.commit()

    def search(self, query: str, servers: Sequence[str] = (), limit: int = 5) -> IndexResult:
        """The `limit` best matches of `query`'s words (any of them), in `servers` only when
        some are given, with every server's match count. A query with no words lists the
        tools of `servers` in the order they were indexed (blocking)."""
        match = fts_query(words(query), any_term=True)
        keep, values = _server_filter(servers)
        with self._lock:
            if match is None:
                return self._browse(keep, values, limit)
            rows = self._conn.execute(
                f"SELECT tool, server, bm25(tools, ?, ?, ?) AS rank FROM tools"
                f" WHERE tools MATCH ?{keep} ORDER BY rank, rowid LIMIT ?",
                (*WEIGHTS, match, *values, limit),
            ).fetchall()
            facets = self._conn.execute(
                "SELECT server, COUNT(*) FROM tools WHERE tools MATCH ?"
                " GROUP BY server ORDER BY COUNT(*) DESC, server",
                (match,),
            ).fetchall()
        hits = tuple(IndexHit(str(r[0]), str(r[1]), float(r[2])) for r in rows)
        return IndexResult(hits, tuple((str(s), int(n)) for s, n in facets))

    def _browse(self, keep: str, values: tuple[str, ...], limit: int) -> IndexResult:
        if not values:
            return IndexResult(())
        rows = self._conn.execute(
            f"SELECT tool, server FROM tools WHERE 1 = 1{keep} ORDER BY rowid LIMIT ?",
            (*values, limit),
        ).fetchall()
        facets = self._conn.execute(
            f"SELECT server, COUNT(*) FROM tools WHERE 1 = 1{keep}"
            " GROUP BY server ORDER BY COUNT(*) DESC, server",
            values,
        ).fetchall()
        hits = tuple(IndexHit(str(r[0]), str(r[1]), 0.0) for r in rows)
        return IndexResult(hits, tuple((str(s), int(n)) for s, n in facets))


def _server_filter(servers: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The SQL that keeps to `servers` (nothing when none is given) and its values."""
    if not servers:
        return "", ()
    marks = ", ".join("?" for _ in servers)
    return f" AND server IN ({marks})", tuple(servers)
