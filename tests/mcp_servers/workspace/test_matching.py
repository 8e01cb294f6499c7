"""Search never stalls: RE2 matches in linear time, refuses what it cannot match, and a search
stops at its time budget; hard-linked files are never read."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mcp_servers.workspace import Limits, build_server
from mcp_servers.workspace.models import SearchResult

from .conftest import error_code, text_of

pytestmark = pytest.mark.anyio

# Nested quantifiers: each one takes Python's backtracking engine minutes on 30 characters.
REDOS_PATTERNS = (
    r"(a+)+$",
    r"(a*)*$",
    r"(a|a)+$",
    r"(a|aa)+$",
    r"(a+)*b",
    r"([a-z]+)+$",
    r"(\w+\s?)+$",
    r"(.*a){12}$",
    r"^(a+)+(b+)+c$",
    r"(x+x+)+y",
)
REDOS_INPUTS = ("a" * 31 + "!", "x" * 40 + "z", "a" * 5000 + "!")


@pytest.fixture
async def client(root: Path) -> AsyncIterator[Client]:
    async with Client(build_server(root), raise_exceptions=True) as connected:
        yield connected


async def search(client: Client, **arguments: Any) -> CallToolResult:
    return await client.call_tool("search", arguments)


async def test_nested_quantifier_patterns_finish_against_their_worst_inputs(
    client: Client, root: Path
) -> None:
    (root / "evil.txt").write_text("\n".join(REDOS_INPUTS) + "\n")
    for pattern in REDOS_PATTERNS:
        result = await search(client, query=pattern, regex=True)
        assert not result.is_error, pattern
        found = SearchResult.model_validate(result.structured_content)
        assert found.timed_out is False


async def test_patterns_the_linear_engine_cannot_run_are_refused_not_backtracked(
    client: Client,
) -> None:
    for pattern in (r"(a)\1", r"foo(?=bar)", r"(?<!x)y", r"(a{1000}){1000}"):
        result = await search(client, query=pattern, regex=True)
        assert error_code(result) == "invalid_regex", pattern
        assert "RE2" in text_of(result)


async def test_a_literal_query_matches_regex_characters_literally(
    client: Client, root: Path
) -> None:
    (root / "lit.txt").write_text("a.b\naxb\n(a+)+$\n")
    dotted = SearchResult.model_validate((await search(client, query="a.b")).structured_content)
    assert [(m.path, m.line) for m in dotted.matches] == [("lit.txt", 1)]
    nested = SearchResult.model_validate((await search(client, query="(a+)+$")).structured_content)
    assert [(m.path, m.line) for m in nested.matches] == [("lit.txt", 3)]


async def test_a_search_past_its_time_budget_returns_what_it_found_marked_timed_out(
    root: Path,
) -> None:
    for index in range(30):
        (root / f"f{index:02}.txt").write_text("hit\n" * 3000)
    limits = Limits(max_search_seconds=0.0)
    async with Client(build_server(root, limits=limits), raise_exceptions=True) as client:
        result = await search(client, query="miss")
    found = SearchResult.model_validate(result.structured_content)
    assert (found.truncated, found.timed_out, found.matches) == (True, True, [])
    assert found.files_scanned == 1
    assert "time limit" in text_of(result)


async def test_a_hard_link_to_a_file_outside_is_refused_by_read_edit_and_search(
    client: Client, root: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", root / "linked.txt")
    read = await client.call_tool("read", {"path": "linked.txt"})
    assert error_code(read) == "hard_link"
    edit = await client.call_tool("edit", {"path": "linked.txt", "old": "top", "new": "no"})
    assert error_code(edit) == "hard_link"
    found = SearchResult.model_validate((await search(client, query="secret")).structured_content)
    assert found.matches == []
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_writing_over_a_hard_link_leaves_the_outside_name_unchanged(
    client: Client, root: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", root / "linked.txt")
    result = await client.call_tool("write", {"path": "linked.txt", "content": "mine\n"})
    assert not result.is_error
    assert (root / "linked.txt").read_text() == "mine\n"
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_anchors_mean_line_start_and_end_in_every_file_crlf_included(
    client: Client, root: Path
) -> None:
    (root / "unix.txt").write_text("xa\nbeta\n")
    (root / "dos.txt").write_bytes(b"xa\r\nbeta\r\n")
    found = SearchResult.model_validate(
        (await search(client, query=r"^bet\w$", regex=True)).structured_content
    )
    assert sorted((m.path, m.line, m.text) for m in found.matches) == [
        ("dos.txt", 2, "beta"),
        ("sub/a.txt", 2, "beta"),
        ("unix.txt", 2, "beta"),
    ]
    ends = SearchResult.model_validate(
        (await search(client, query=r"xa$", regex=True)).structured_content
    )
    assert sorted(m.path for m in ends.matches) == ["dos.txt", "unix.txt"]


async def test_a_pattern_spanning_lines_matches_no_line(client: Client, root: Path) -> None:
    (root / "two.txt").write_text("abc\nabc\n")
    found = SearchResult.model_validate(
        (await search(client, query=r"abc\nabc", regex=True)).structured_content
    )
    assert (found.matches, found.files_scanned) == ([], 2)


async def test_a_recursive_listing_past_its_time_budget_stops_truncated(root: Path) -> None:
    for index in range(1100):
        (root / f"n{index:04}.txt").write_text("")
    limits = Limits(max_search_seconds=0.0)
    async with Client(build_server(root, limits=limits), raise_exceptions=True) as client:
        result = await client.call_tool("list", {"recursive": True, "glob": "*.none"})
    assert result.structured_content is not None
    assert (result.structured_content["entries"], result.structured_content["truncated"]) == (
        [],
        True,
    )
