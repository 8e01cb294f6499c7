"""The path-escape corpus: every way out of the workspace is refused with its own code."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcp_servers.workspace.errors import ErrorCode, PathError
from mcp_servers.workspace.paths import (
    Expect,
    Kind,
    is_within,
    parse_relative,
    real_root,
    resolve,
)


@pytest.fixture
def tree(root: Path, outside: Path) -> Path:
    """The workspace with every kind of trap: escaping links, loops, special files."""
    (root / "a_file.txt").write_text("x\n")
    (root / "link_out").symlink_to("../outside")
    (root / "link_abs").symlink_to(outside)
    (root / "file_out").symlink_to(outside / "secret.txt")
    (root / "dangling_out").symlink_to("../outside/missing.txt")
    (root / "dangling_abs").symlink_to("/nonexistent-atrium/x.txt")
    (root / "sub" / "deep_out").symlink_to("../../outside")
    (root / "chain1").symlink_to("chain2")
    (root / "chain2").symlink_to("link_out")
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "sneaky").symlink_to("sub/../../outside")
    (root / "link_in").symlink_to("sub")
    (root / "file_in").symlink_to("sub/a.txt")
    (root / "dangling_in").symlink_to("sub/new.txt")
    os.mkfifo(root / "fifo")
    os.mknod(root / "sock", stat.S_IFSOCK | 0o600)
    return real_root(root)


LEXICAL_CASES: list[tuple[str, ErrorCode]] = [
    ("/etc/passwd", ErrorCode.ABSOLUTE),
    ("/", ErrorCode.ABSOLUTE),
    ("//server/share/x", ErrorCode.ABSOLUTE),
    ("\\\\server\\share\\x", ErrorCode.ABSOLUTE),
    ("\\\\?\\C:\\Windows", ErrorCode.ABSOLUTE),
    ("\\Windows\\win.ini", ErrorCode.ABSOLUTE),
    ("C:\\Windows\\win.ini", ErrorCode.ABSOLUTE),
    ("C:/Windows/win.ini", ErrorCode.ABSOLUTE),
    ("c:relative.txt", ErrorCode.ABSOLUTE),
    ("sub/D:/x", ErrorCode.ABSOLUTE),
    ("..", ErrorCode.PARENT_ESCAPE),
    ("../outside/secret.txt", ErrorCode.PARENT_ESCAPE),
    ("sub/../../outside", ErrorCode.PARENT_ESCAPE),
    ("sub/../sub/a.txt", ErrorCode.PARENT_ESCAPE),
    ("sub/..", ErrorCode.PARENT_ESCAPE),
    ("..\\outside\\secret.txt", ErrorCode.PARENT_ESCAPE),
    ("sub\\..\\..\\x", ErrorCode.PARENT_ESCAPE),
    ("./../x", ErrorCode.PARENT_ESCAPE),
    ("...", ErrorCode.PARENT_ESCAPE),
    (".. ", ErrorCode.PARENT_ESCAPE),
    (". .", ErrorCode.PARENT_ESCAPE),
    ("sub/..../x", ErrorCode.PARENT_ESCAPE),
    ("~", ErrorCode.HOME),
    ("~/.ssh/id_rsa", ErrorCode.HOME),
    ("~root/.bashrc", ErrorCode.HOME),
    ("~\\x", ErrorCode.HOME),
    ("a\x00b", ErrorCode.NUL),
    ("\x00", ErrorCode.NUL),
    ("sub/a.txt\x00.png", ErrorCode.NUL),
    ("a\nb", ErrorCode.INVALID_CHAR),
    ("a\rb", ErrorCode.INVALID_CHAR),
    ("\x1b[31mred", ErrorCode.INVALID_CHAR),
    ("a\x7f", ErrorCode.INVALID_CHAR),
    ("bad\ud800surrogate", ErrorCode.INVALID_CHAR),
    ("", ErrorCode.EMPTY),
    ("   ", ErrorCode.EMPTY),
    ("sub/ /a.txt", ErrorCode.BLANK_NAME),
    ("sub/   ", ErrorCode.BLANK_NAME),
    ("a" * 256, ErrorCode.TOO_LONG),
    ("é" * 128, ErrorCode.TOO_LONG),
    ("a/" * 2100, ErrorCode.TOO_LONG),
]


@pytest.mark.parametrize(("path", "code"), LEXICAL_CASES)
def test_lexically_bad_paths_are_refused_with_their_code(path: str, code: ErrorCode) -> None:
    with pytest.raises(PathError) as caught:
        parse_relative(path)
    assert caught.value.code is code


FILESYSTEM_CASES: list[tuple[str, ErrorCode]] = [
    ("link_out", ErrorCode.SYMLINK_ESCAPE),
    ("link_out/secret.txt", ErrorCode.SYMLINK_ESCAPE),
    ("link_abs/secret.txt", ErrorCode.SYMLINK_ESCAPE),
    ("file_out", ErrorCode.SYMLINK_ESCAPE),
    ("dangling_out", ErrorCode.SYMLINK_ESCAPE),
    ("dangling_abs", ErrorCode.SYMLINK_ESCAPE),
    ("sub/deep_out/secret.txt", ErrorCode.SYMLINK_ESCAPE),
    ("chain1/secret.txt", ErrorCode.SYMLINK_ESCAPE),
    ("sneaky/secret.txt", ErrorCode.SYMLINK_ESCAPE),
    ("loop_a", ErrorCode.SYMLINK_LOOP),
    ("loop_b/x.txt", ErrorCode.SYMLINK_LOOP),
    ("fifo", ErrorCode.NOT_REGULAR),
    ("sock", ErrorCode.NOT_REGULAR),
    ("missing.txt", ErrorCode.NOT_FOUND),
    ("missing/a.txt", ErrorCode.NOT_FOUND),
    ("a_file.txt/x", ErrorCode.NOT_A_DIRECTORY),
    ("sub/a.txt/deeper/x", ErrorCode.NOT_A_DIRECTORY),
]


@pytest.mark.parametrize(("path", "code"), FILESYSTEM_CASES)
def test_paths_that_leave_or_misname_the_workspace_are_refused(
    tree: Path, path: str, code: ErrorCode
) -> None:
    with pytest.raises(PathError) as caught:
        resolve(tree, path)
    assert caught.value.code is code


@pytest.mark.parametrize(
    "path", ["link_out/new.txt", "dangling_out", "sub/deep_out/new/x.txt", "link_abs/x"]
)
def test_writes_through_escaping_links_are_refused_even_for_new_files(
    tree: Path, path: str
) -> None:
    with pytest.raises(PathError) as caught:
        resolve(tree, path, expect=Expect.FILE, must_exist=False)
    assert caught.value.code is ErrorCode.SYMLINK_ESCAPE


def test_a_character_device_is_not_a_regular_file(tree: Path) -> None:
    try:
        os.mknod(tree / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating device nodes needs CAP_MKNOD")
    with pytest.raises(PathError) as caught:
        resolve(tree, "null")
    assert caught.value.code is ErrorCode.NOT_REGULAR


@pytest.mark.parametrize(
    ("path", "expect", "code"),
    [
        ("sub", Expect.FILE, ErrorCode.IS_A_DIRECTORY),
        (".", Expect.FILE, ErrorCode.IS_A_DIRECTORY),
        ("link_in", Expect.FILE, ErrorCode.IS_A_DIRECTORY),
        ("sub/a.txt", Expect.DIR, ErrorCode.NOT_A_DIRECTORY),
    ],
)
def test_the_wrong_kind_of_entry_is_refused(
    tree: Path, path: str, expect: Expect, code: ErrorCode
) -> None:
    with pytest.raises(PathError) as caught:
        resolve(tree, path, expect=expect)
    assert caught.value.code is code


@pytest.mark.parametrize(
    ("path", "display"),
    [
        ("sub/a.txt", "sub/a.txt"),
        ("./sub//a.txt", "sub/a.txt"),
        ("sub\\a.txt", "sub/a.txt"),
        ("sub/./a.txt", "sub/a.txt"),
        (".", "."),
        ("./", "."),
    ],
)
def test_equivalent_spellings_resolve_to_the_same_file(tree: Path, path: str, display: str) -> None:
    resolved = resolve(tree, path)
    assert resolved.display == display
    assert is_within(resolved.real, tree)


@pytest.mark.parametrize(
    "name",
    [
        "a..b.txt",
        "..hidden",
        ".hidden",
        "file...txt",
        "trailing.",
        "données/été.txt",
        "日本語/ファイル.md",
        "emoji-🙂.txt",
        "name with spaces.txt",
        "sub/~tilde-inside.txt",
        "\u2025/fullwidth\uff0e\uff0e",
        "..%2f..%2fescape",
        "a" * 255,
    ],
)
def test_unusual_but_harmless_names_are_accepted(tree: Path, name: str) -> None:
    target = tree / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("ok\n")
    resolved = resolve(tree, name, expect=Expect.FILE)
    assert resolved.kind is Kind.FILE
    assert resolved.real == target


def test_a_symlink_that_stays_inside_the_root_is_followed(tree: Path) -> None:
    resolved = resolve(tree, "link_in/a.txt", expect=Expect.FILE)
    assert resolved.real_parts == ("sub", "a.txt")
    assert resolve(tree, "file_in").real_parts == ("sub", "a.txt")
    assert resolve(tree, "link_in").kind is Kind.DIR


def test_a_dangling_symlink_inside_the_root_is_a_new_file_for_writes(tree: Path) -> None:
    resolved = resolve(tree, "dangling_in", expect=Expect.FILE, must_exist=False)
    assert resolved.kind is Kind.MISSING
    assert resolved.real_parts == ("sub", "new.txt")


def test_missing_parents_are_allowed_when_writing(tree: Path) -> None:
    resolved = resolve(tree, "new/dir/x.txt", expect=Expect.FILE, must_exist=False)
    assert resolved.kind is Kind.MISSING
    assert resolved.real_parts == ("new", "dir", "x.txt")


def test_a_symlinked_root_is_used_by_its_real_path(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    real = real_root(alias)
    assert real == Path(os.path.realpath(root))
    assert resolve(real, "sub/a.txt").real == real / "sub" / "a.txt"


def test_a_missing_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        real_root(tmp_path / "nope")


def test_path_errors_name_the_path_but_never_the_host_root(tree: Path) -> None:
    with pytest.raises(PathError) as caught:
        resolve(tree, "link_out/secret.txt")
    assert caught.value.path == "link_out/secret.txt"
    assert str(tree) not in str(caught.value)
