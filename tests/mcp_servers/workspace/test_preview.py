"""The pure preview helpers: the approval dialog's diff, computed without writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.workspace import ErrorCode, PathError, WorkspaceError, preview_edit, preview_write


def test_preview_write_diffs_a_new_file_against_dev_null(root: Path) -> None:
    diff = preview_write(root, "docs/new.md", "# Title\n")
    assert diff == "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+# Title\n"
    assert not (root / "docs").exists()


def test_preview_write_marks_a_missing_final_newline(root: Path) -> None:
    diff = preview_write(root, "sub/a.txt", "alpha\nbeta\ngamma")
    assert diff.endswith("+gamma\n\\ No newline at end of file\n")


def test_preview_write_of_identical_content_is_empty(root: Path) -> None:
    assert preview_write(root, "sub/a.txt", "alpha\nbeta\ngamma\n") == ""


def test_preview_edit_diffs_the_replacement(root: Path) -> None:
    diff = preview_edit(root, "sub/a.txt", "gamma", "delta", False)
    assert diff.splitlines()[:2] == ["--- a/sub/a.txt", "+++ b/sub/a.txt"]
    assert "-gamma\n+delta\n" in diff
    assert (root / "sub" / "a.txt").read_text() == "alpha\nbeta\ngamma\n"


def test_preview_edit_replace_all_covers_every_occurrence(root: Path) -> None:
    (root / "r.txt").write_text("x\nx\n")
    diff = preview_edit(root, "r.txt", "x", "y", replace_all=True)
    assert diff.count("+y\n") == 2


@pytest.mark.parametrize(
    ("path", "code"),
    [("/abs", ErrorCode.ABSOLUTE), ("../x", ErrorCode.PARENT_ESCAPE), ("~/x", ErrorCode.HOME)],
)
def test_previews_raise_the_same_path_errors_as_the_tools(
    root: Path, path: str, code: ErrorCode
) -> None:
    with pytest.raises(PathError) as on_write:
        preview_write(root, path, "x")
    with pytest.raises(PathError) as on_edit:
        preview_edit(root, path, "a", "b")
    assert on_write.value.code is code
    assert on_edit.value.code is code


def test_preview_edit_raises_the_edit_errors(root: Path) -> None:
    with pytest.raises(WorkspaceError) as caught:
        preview_edit(root, "sub/a.txt", "a", "b")
    assert caught.value.code is ErrorCode.AMBIGUOUS


def test_preview_through_an_escaping_symlink_is_refused(root: Path, outside: Path) -> None:
    (root / "out").symlink_to(outside)
    with pytest.raises(PathError) as caught:
        preview_write(root, "out/secret.txt", "x")
    assert caught.value.code is ErrorCode.SYMLINK_ESCAPE
