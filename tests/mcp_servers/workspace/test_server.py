"""The workspace tools over the SDK's in-memory transport: results, refusals, annotations."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mcp_servers.workspace import Limits, build_server
from mcp_servers.workspace.models import (
    EditResult,
    ListResult,
    PreviewResult,
    ReadResult,
    SearchResult,
    WriteResult,
)

from .conftest import error_code, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(root: Path) -> AsyncIterator[Client]:
    server = build_server(root, limits=Limits(max_read_bytes=4096))
    async with Client(server, raise_exceptions=True) as connected:
        yield connected


async def call(client: Client, name: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(name, arguments)


async def test_the_server_offers_exactly_the_six_workspace_tools(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["edit", "list", "preview", "read", "search", "write"]
    for tool in tools.values():
        assert tool.output_schema is not None
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is False


@pytest.mark.parametrize("name", ["list", "read", "search", "preview"])
async def test_reading_tools_are_annotated_read_only_and_idempotent(
    client: Client, name: str
) -> None:
    tool = next(t for t in (await client.list_tools()).tools if t.name == name)
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is True
    assert tool.annotations.idempotent_hint is True


@pytest.mark.parametrize(("name", "idempotent"), [("write", True), ("edit", False)])
async def test_writing_tools_are_annotated_destructive(
    client: Client, name: str, idempotent: bool
) -> None:
    tool = next(t for t in (await client.list_tools()).tools if t.name == name)
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is False
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.idempotent_hint is idempotent


async def test_list_returns_typed_entries_with_sizes(client: Client, root: Path) -> None:
    (root / "notes.md").write_text("hi\n")
    result = await call(client, "list")
    listing = ListResult.model_validate(result.structured_content)
    assert [(e.path, e.type, e.size) for e in listing.entries] == [
        ("notes.md", "file", 3),
        ("sub", "dir", None),
    ]
    assert listing.truncated is False
    assert "notes.md" in text_of(result)


async def test_list_can_recurse_and_filter_by_glob(client: Client, root: Path) -> None:
    (root / "sub" / "deep").mkdir()
    (root / "sub" / "deep" / "b.txt").write_text("b\n")
    (root / "sub" / "c.md").write_text("c\n")
    by_name = ListResult.model_validate(
        (await call(client, "list", path="sub", glob="*.txt", recursive=True)).structured_content
    )
    assert [e.path for e in by_name.entries] == ["sub/a.txt", "sub/deep/b.txt"]
    by_path = ListResult.model_validate(
        (await call(client, "list", glob="sub/deep/*", recursive=True)).structured_content
    )
    assert [e.path for e in by_path.entries] == ["sub/deep/b.txt"]


async def test_list_reports_truncation_when_entries_exceed_the_cap(
    client: Client, root: Path
) -> None:
    for index in range(5):
        (root / f"f{index}.txt").write_text("x")
    listing = ListResult.model_validate(
        (await call(client, "list", max_entries=3)).structured_content
    )
    assert len(listing.entries) == 3
    assert listing.truncated is True


async def test_list_shows_escaping_symlinks_without_following_them(
    client: Client, root: Path, outside: Path
) -> None:
    (root / "out").symlink_to(outside)
    listing = ListResult.model_validate(
        (await call(client, "list", recursive=True)).structured_content
    )
    assert ("out", "symlink") in [(e.path, e.type) for e in listing.entries]
    assert all("secret" not in e.path for e in listing.entries)
    assert error_code(await call(client, "list", path="out")) == "symlink_escape"


@pytest.mark.parametrize(
    ("path", "code"),
    [("sub/a.txt", "not_a_directory"), ("missing", "not_found"), ("../", "parent_escape")],
)
async def test_list_refuses_what_is_not_a_workspace_directory(
    client: Client, path: str, code: str
) -> None:
    assert error_code(await call(client, "list", path=path)) == code


async def test_read_returns_the_whole_file_as_text(client: Client) -> None:
    result = await call(client, "read", path="sub/a.txt")
    read = ReadResult.model_validate(result.structured_content)
    assert read.content == "alpha\nbeta\ngamma\n"
    assert (read.start_line, read.end_line, read.total_lines) == (1, 3, 3)
    assert read.truncated is False
    assert text_of(result) == "alpha\nbeta\ngamma\n"


async def test_read_returns_a_window_of_lines(client: Client) -> None:
    read = ReadResult.model_validate(
        (await call(client, "read", path="sub/a.txt", offset=1, limit=1)).structured_content
    )
    assert read.content == "beta\n"
    assert (read.start_line, read.end_line, read.total_lines) == (2, 2, 3)
    assert read.truncated is True


async def test_read_past_the_end_returns_nothing(client: Client) -> None:
    read = ReadResult.model_validate(
        (await call(client, "read", path="sub/a.txt", offset=10)).structured_content
    )
    assert (read.content, read.end_line, read.truncated) == ("", 0, False)


async def test_read_refuses_binary_huge_and_special_files(client: Client, root: Path) -> None:
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (root / "huge.txt").write_text("x" * 5000)
    os.mkfifo(root / "pipe")
    assert error_code(await call(client, "read", path="image.png")) == "binary"
    assert error_code(await call(client, "read", path="latin1.txt")) == "binary"
    assert error_code(await call(client, "read", path="huge.txt")) == "too_large"
    assert error_code(await call(client, "read", path="pipe")) == "not_regular"
    assert error_code(await call(client, "read", path="sub")) == "is_a_directory"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/etc/passwd", "absolute"),
        ("../outside/secret.txt", "parent_escape"),
        ("~/.bashrc", "home"),
        ("a\x00b", "nul"),
        ("missing.txt", "not_found"),
    ],
)
async def test_read_refuses_paths_outside_the_workspace(
    client: Client, path: str, code: str
) -> None:
    assert error_code(await call(client, "read", path=path)) == code


async def test_read_rejects_a_negative_offset_as_bad_arguments(client: Client) -> None:
    result = await call(client, "read", path="sub/a.txt", offset=-1)
    assert result.is_error


async def test_write_creates_a_file_and_its_parent_directories(client: Client, root: Path) -> None:
    result = await call(client, "write", path="new/deep/x.md", content="héllo\n")
    written = WriteResult.model_validate(result.structured_content)
    assert written == WriteResult(path="new/deep/x.md", bytes_written=7, created=True)
    assert (root / "new" / "deep" / "x.md").read_text() == "héllo\n"


async def test_write_overwrites_and_is_idempotent(client: Client, root: Path) -> None:
    for _ in range(2):
        written = WriteResult.model_validate(
            (await call(client, "write", path="sub/a.txt", content="z\n")).structured_content
        )
        assert written.created is False
    assert (root / "sub" / "a.txt").read_text() == "z\n"


async def test_write_through_an_inside_symlink_updates_its_target(
    client: Client, root: Path
) -> None:
    (root / "alias.txt").symlink_to("sub/a.txt")
    await call(client, "write", path="alias.txt", content="via link\n")
    assert (root / "alias.txt").is_symlink()
    assert (root / "sub" / "a.txt").read_text() == "via link\n"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("linked/x.txt", "symlink_escape"),
        ("linked/new/dir/x.txt", "symlink_escape"),
        ("secret_link", "symlink_escape"),
        ("../outside/x.txt", "parent_escape"),
        ("/tmp/x.txt", "absolute"),
        ("sub", "is_a_directory"),
        ("sub/a.txt/x", "not_a_directory"),
        ("fifo", "not_regular"),
        ("", "empty"),
    ],
)
async def test_write_refuses_to_leave_the_workspace_or_clobber_non_files(
    client: Client, root: Path, outside: Path, path: str, code: str
) -> None:
    (root / "linked").symlink_to(outside)
    (root / "secret_link").symlink_to(outside / "secret.txt")
    os.mkfifo(root / "fifo")
    before = sorted(p.name for p in outside.iterdir())
    assert error_code(await call(client, "write", path=path, content="pwned")) == code
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert stat.S_ISFIFO((root / "fifo").lstat().st_mode)


async def test_edit_replaces_a_unique_occurrence_and_returns_the_diff(
    client: Client, root: Path
) -> None:
    result = await call(client, "edit", path="sub/a.txt", old="beta", new="BETA")
    edited = EditResult.model_validate(result.structured_content)
    assert edited.replacements == 1
    assert "-beta\n+BETA\n" in edited.diff
    assert (root / "sub" / "a.txt").read_text() == "alpha\nBETA\ngamma\n"


async def test_edit_replace_all_replaces_every_occurrence(client: Client, root: Path) -> None:
    (root / "r.txt").write_text("a-a-a\n")
    edited = EditResult.model_validate(
        (
            await call(client, "edit", path="r.txt", old="a", new="b", replace_all=True)
        ).structured_content
    )
    assert edited.replacements == 3
    assert (root / "r.txt").read_text() == "b-b-b\n"


@pytest.mark.parametrize(
    ("old", "code"),
    [("a", "ambiguous"), ("aa", "ambiguous"), ("zzz", "no_match"), ("", "empty_old")],
)
async def test_edit_refuses_ambiguous_missing_or_empty_old_text(
    client: Client, root: Path, old: str, code: str
) -> None:
    (root / "r.txt").write_text("aaa\n")
    assert error_code(await call(client, "edit", path="r.txt", old=old, new="b")) == code
    assert (root / "r.txt").read_text() == "aaa\n"


async def test_edit_refuses_binary_files_and_escapes(
    client: Client, root: Path, outside: Path
) -> None:
    (root / "bin.dat").write_bytes(b"\x00\x01")
    (root / "out").symlink_to(outside)
    assert error_code(await call(client, "edit", path="bin.dat", old="a", new="b")) == "binary"
    result = await call(client, "edit", path="out/secret.txt", old="top", new="no")
    assert error_code(result) == "symlink_escape"
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_search_finds_substrings_with_paths_and_line_numbers(
    client: Client, root: Path
) -> None:
    (root / "b.txt").write_text("nothing\nbeta again\n")
    result = await call(client, "search", query="beta")
    found = SearchResult.model_validate(result.structured_content)
    assert [(m.path, m.line, m.text) for m in found.matches] == [
        ("b.txt", 2, "beta again"),
        ("sub/a.txt", 2, "beta"),
    ]
    assert found.truncated is False
    assert "sub/a.txt:2: beta" in text_of(result)


async def test_search_supports_regex_case_folding_glob_and_a_sub_path(
    client: Client, root: Path
) -> None:
    (root / "b.md").write_text("GAMMA\n")
    regex = SearchResult.model_validate(
        (await call(client, "search", query=r"^g\w+a$", regex=True)).structured_content
    )
    assert [(m.path, m.line) for m in regex.matches] == [("sub/a.txt", 3)]
    folded = SearchResult.model_validate(
        (await call(client, "search", query="gamma", case_sensitive=False)).structured_content
    )
    assert [m.path for m in folded.matches] == ["b.md", "sub/a.txt"]
    globbed = SearchResult.model_validate(
        (
            await call(client, "search", query="gamma", case_sensitive=False, glob="*.md")
        ).structured_content
    )
    assert [m.path for m in globbed.matches] == ["b.md"]
    scoped = SearchResult.model_validate(
        (await call(client, "search", query="a", path="sub/a.txt")).structured_content
    )
    assert [m.line for m in scoped.matches] == [1, 2, 3]


async def test_search_results_are_bounded(client: Client, root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 50)
    found = SearchResult.model_validate(
        (await call(client, "search", query="hit", max_results=10)).structured_content
    )
    assert len(found.matches) == 10
    assert found.truncated is True


async def test_search_skips_binary_files_and_never_follows_symlinks_out(
    client: Client, root: Path, outside: Path
) -> None:
    (root / "bin.dat").write_bytes(b"secret\x00")
    (root / "out").symlink_to(outside)
    (root / "secret_file").symlink_to(outside / "secret.txt")
    found = SearchResult.model_validate(
        (await call(client, "search", query="secret")).structured_content
    )
    assert found.matches == []


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"query": "(", "regex": True}, "invalid_regex"),
        ({"query": ""}, "invalid_arguments"),
        ({"query": "x", "path": "../outside"}, "parent_escape"),
        ({"query": "x", "path": "nope"}, "not_found"),
    ],
)
async def test_search_refuses_bad_queries_and_paths(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    assert error_code(await call(client, "search", **arguments)) == code


async def test_preview_of_a_write_diffs_without_writing(client: Client, root: Path) -> None:
    result = await call(client, "preview", path="sub/a.txt", content="alpha\n")
    preview = PreviewResult.model_validate(result.structured_content)
    assert (preview.operation, preview.exists) == ("write", True)
    assert "-beta\n-gamma\n" in preview.diff
    assert text_of(result) == preview.diff
    assert (root / "sub" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"


async def test_preview_of_a_new_file_diffs_against_nothing(client: Client, root: Path) -> None:
    preview = PreviewResult.model_validate(
        (await call(client, "preview", path="n/new.txt", content="one\n")).structured_content
    )
    assert preview.exists is False
    assert preview.diff.startswith("--- /dev/null\n+++ b/n/new.txt\n")
    assert not (root / "n").exists()


async def test_preview_of_an_edit_diffs_without_editing(client: Client, root: Path) -> None:
    preview = PreviewResult.model_validate(
        (await call(client, "preview", path="sub/a.txt", old="beta", new="B")).structured_content
    )
    assert preview.operation == "edit"
    assert "-beta\n+B\n" in preview.diff
    assert (root / "sub" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"path": "sub/a.txt"}, "invalid_arguments"),
        ({"path": "sub/a.txt", "content": "x", "old": "a", "new": "b"}, "invalid_arguments"),
        ({"path": "sub/a.txt", "old": "a"}, "invalid_arguments"),
        ({"path": "sub/a.txt", "old": "nope", "new": "b"}, "no_match"),
        ({"path": "../x", "content": "x"}, "parent_escape"),
        ({"path": "sub", "content": "x"}, "is_a_directory"),
    ],
)
async def test_preview_fails_exactly_as_the_real_call_would(
    client: Client, arguments: dict[str, Any], code: str
) -> None:
    assert error_code(await call(client, "preview", **arguments)) == code


async def test_list_and_search_never_show_a_writes_temporary_file(
    client: Client, root: Path
) -> None:
    temp = root / "sub" / ".atrium-0123456789abcdef.tmp"
    temp.write_text("alpha, half written")
    with temp.open("rb") as writing:
        fcntl.flock(writing, fcntl.LOCK_EX)  # its writer is still at work
        listed = ListResult.model_validate(
            (await call(client, "list", recursive=True)).structured_content
        )
        found = SearchResult.model_validate(
            (await call(client, "search", query="alpha")).structured_content
        )
    assert [e.path for e in listed.entries] == ["sub", "sub/a.txt"]
    assert [m.path for m in found.matches] == ["sub/a.txt"]


async def test_a_server_starting_removes_the_temporary_files_of_writes_that_died(
    root: Path,
) -> None:
    dead = root / "sub" / ".atrium-0123456789abcdef.tmp"
    dead.write_text("half writ")
    build_server(root)
    assert not dead.exists()
    assert (root / "sub" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
