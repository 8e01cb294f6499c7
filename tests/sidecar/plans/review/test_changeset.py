"""The changeset of an isolated copy: added, changed and deleted files with unified diffs,
binary files marked, ignored build output left out, and the author's own edits meanwhile
reported as conflicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.plans.review import changeset as changeset_module
from sidecar.plans.review.changeset import compute_changeset
from sidecar.plans.review.isolation import create_isolation
from sidecar.plans.review.limits import Deadline


def _by_path(workspace: Path, tmp_path: Path, edit) -> dict[str, object]:  # type: ignore[no-untyped-def]
    made = create_isolation(workspace, tmp_path / "iso", Deadline(30))
    edit(made.folder)
    return {f.path: f for f in compute_changeset(made, Deadline(30)).files}


def test_an_untouched_copy_has_an_empty_changeset(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    assert compute_changeset(made, Deadline(30)).files == ()


def test_added_changed_and_deleted_files_come_back_with_diffs(
    plain_workspace: Path, tmp_path: Path
):
    def edit(folder: Path) -> None:
        (folder / "notes.txt").write_text("one\n2\n")
        (folder / "docs" / "guide.md").unlink()
        (folder / "new" / "deep").mkdir(parents=True)
        (folder / "new" / "deep" / "file.txt").write_text("hello\n")

    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    edit(made.folder)
    changes = compute_changeset(made, Deadline(30))
    assert [(f.path, f.status) for f in changes.files] == [
        ("docs/guide.md", "deleted"),
        ("new/deep/file.txt", "added"),
        ("notes.txt", "changed"),
    ]
    changed = changes.files[2]
    assert "-two\n" in changed.diff and "+2\n" in changed.diff
    assert changed.diff.startswith("--- a/notes.txt\n+++ b/notes.txt\n")
    assert "+hello\n" in changes.files[1].diff
    assert changes.files[1].diff.startswith("--- /dev/null")
    assert "-# Guide\n" in changes.files[0].diff
    assert not any(f.conflict or f.binary for f in changes.files)


def test_a_binary_file_is_marked_and_carries_no_diff(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "logo.bin").write_bytes(b"\x89PNG\0\0other")
    [change] = compute_changeset(made, Deadline(30)).files
    assert (change.path, change.status, change.binary, change.diff) == (
        "logo.bin",
        "changed",
        True,
        "",
    )


def test_a_mode_change_alone_is_a_change(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "notes.txt").chmod(0o755)
    [change] = compute_changeset(made, Deadline(30)).files
    assert (change.path, change.status, change.diff) == ("notes.txt", "changed", "")


def test_ignored_build_output_in_a_worktree_is_not_part_of_the_changeset(
    git_workspace: Path, tmp_path: Path
):
    made = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "build").mkdir()
    (made.folder / "build" / "app.o").write_bytes(b"\0\0")
    (made.folder / "src" / "app.py").write_text("print('hello')\n")
    [change] = compute_changeset(made, Deadline(30)).files
    assert (change.path, change.status) == ("src/app.py", "changed")


def test_a_file_the_author_changed_meanwhile_is_a_conflict(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "notes.txt").write_text("agent\n")
    (made.folder / "docs" / "guide.md").write_text("# Guide\nmore\n")
    (plain_workspace / "notes.txt").write_text("author\n")
    files = {f.path: f for f in compute_changeset(made, Deadline(30)).files}
    assert files["notes.txt"].conflict is True
    assert files["notes.txt"].diff.startswith("--- workspace/notes.txt")
    assert "-author\n" in files["notes.txt"].diff
    assert files["docs/guide.md"].conflict is False


def test_a_file_added_by_both_the_same_way_is_no_conflict(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "same.txt").write_text("x\n")
    (plain_workspace / "same.txt").write_text("x\n")
    [change] = compute_changeset(made, Deadline(30)).files
    assert (change.status, change.conflict) == ("added", False)


def test_a_changeset_of_two_thousand_files_is_complete(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(60))
    for n in range(2000):
        (made.folder / f"gen-{n:04}.txt").write_text(f"line {n}\n")
    files = compute_changeset(made, Deadline(60)).files
    assert len(files) == 2000
    assert {f.status for f in files} == {"added"}


def test_past_the_total_diff_budget_files_come_without_a_diff_and_say_so(
    plain_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(changeset_module, "MAX_TOTAL_DIFF_CHARS", 1000)
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    for n in range(5):
        (made.folder / f"f{n}.txt").write_text("x" * 300 + "\n")
    files = compute_changeset(made, Deadline(30)).files
    shown = [f for f in files if f.diff]
    assert len(shown) == 2 and sum(len(f.diff) for f in shown) <= 1000
    assert {f.note for f in files if not f.diff} == {
        "diff left out: the changeset is too large to show whole"
    }
    assert all(f.applicable for f in files)  # still accepted or rejected file by file
