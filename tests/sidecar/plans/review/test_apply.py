"""Applying accepted files: exactly those reach the workspace, a file the author changed
meanwhile is a conflict that stays as the author left it, rejecting everything changes nothing,
and paths that would leave the workspace are refused."""

from __future__ import annotations

from pathlib import Path

from sidecar.plans.review.apply import apply_changes
from sidecar.plans.review.changeset import compute_changeset
from sidecar.plans.review.isolation import Isolation, create_isolation
from sidecar.plans.review.limits import Deadline
from sidecar.plans.review.manifest import scan_tree


def _two_files(workspace: Path, tmp_path: Path) -> Isolation:
    made = create_isolation(workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "first.txt").write_text("first\n")
    (made.folder / "notes.txt").write_text("one\nTWO\n")
    return made


def test_accepting_one_of_two_files_brings_exactly_that_one(plain_workspace: Path, tmp_path: Path):
    made = _two_files(plain_workspace, tmp_path)
    before = scan_tree(plain_workspace, Deadline(30))
    report = apply_changes(made, ["first.txt"], Deadline(30))
    assert (report.applied, report.conflicts, report.refused) == (("first.txt",), (), ())
    after = scan_tree(plain_workspace, Deadline(30))
    assert set(after) - set(before) == {"first.txt"}
    assert {k: v for k, v in after.items() if k != "first.txt"} == before
    assert (plain_workspace / "first.txt").read_text() == "first\n"


def test_accepting_nothing_leaves_the_workspace_unchanged(plain_workspace: Path, tmp_path: Path):
    made = _two_files(plain_workspace, tmp_path)
    before = scan_tree(plain_workspace, Deadline(30))
    assert apply_changes(made, [], Deadline(30)).to_json() == {
        "applied": [],
        "conflicts": [],
        "refused": [],
    }
    assert scan_tree(plain_workspace, Deadline(30)) == before


def test_a_file_the_author_changed_meanwhile_is_a_conflict_and_is_not_overwritten(
    plain_workspace: Path, tmp_path: Path
):
    made = _two_files(plain_workspace, tmp_path)
    (plain_workspace / "notes.txt").write_text("the author's edit\n")
    report = apply_changes(made, ["notes.txt", "first.txt"], Deadline(30))
    assert (report.applied, report.conflicts) == (("first.txt",), ("notes.txt",))
    assert (plain_workspace / "notes.txt").read_text() == "the author's edit\n"


def test_a_file_the_author_created_where_the_agent_added_one_is_a_conflict(
    plain_workspace: Path, tmp_path: Path
):
    made = _two_files(plain_workspace, tmp_path)
    (plain_workspace / "first.txt").write_text("mine\n")
    report = apply_changes(made, ["first.txt"], Deadline(30))
    assert report.conflicts == ("first.txt",)
    assert (plain_workspace / "first.txt").read_text() == "mine\n"


def test_deletions_and_modes_are_applied(plain_workspace: Path, tmp_path: Path):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "docs" / "guide.md").unlink()
    (made.folder / "run.sh").write_text("#!/bin/sh\n")
    (made.folder / "run.sh").chmod(0o755)
    report = apply_changes(made, ["docs/guide.md", "run.sh"], Deadline(30))
    assert report.applied == ("docs/guide.md", "run.sh")
    assert not (plain_workspace / "docs" / "guide.md").exists()
    assert (plain_workspace / "run.sh").stat().st_mode & 0o100


def test_applying_twice_writes_nothing_twice(plain_workspace: Path, tmp_path: Path):
    made = _two_files(plain_workspace, tmp_path)
    apply_changes(made, ["first.txt", "notes.txt"], Deadline(30))
    written = scan_tree(plain_workspace, Deadline(30))
    again = apply_changes(made, ["first.txt", "notes.txt"], Deadline(30))
    assert (again.applied, again.conflicts) == (("first.txt", "notes.txt"), ())
    assert scan_tree(plain_workspace, Deadline(30)) == written


def test_paths_outside_the_workspace_or_unchanged_are_refused(
    plain_workspace: Path, tmp_path: Path
):
    made = _two_files(plain_workspace, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (plain_workspace / "link").symlink_to(outside)
    (made.folder / "link").mkdir()
    (made.folder / "link" / "x.txt").write_text("escape\n")
    report = apply_changes(
        made, ["../evil.txt", "/etc/passwd", ".git/config", "link/x.txt", "logo.bin"], Deadline(30)
    )
    assert report.applied == () and report.conflicts == ()
    reasons = dict(report.refused)
    assert set(reasons) == {"../evil.txt", "/etc/passwd", ".git/config", "link/x.txt", "logo.bin"}
    assert reasons["logo.bin"] == "not changed by the agent"
    assert not (outside / "x.txt").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_a_worktrees_accepted_file_reaches_the_repository_and_the_rest_does_not(
    git_workspace: Path, tmp_path: Path
):
    made = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "src" / "app.py").write_text("print('changed')\n")
    (made.folder / "extra.py").write_text("x = 1\n")
    paths = compute_changeset(made, Deadline(30)).paths
    assert paths == ("extra.py", "src/app.py")
    apply_changes(made, ["src/app.py"], Deadline(30))
    assert (git_workspace / "src" / "app.py").read_text() == "print('changed')\n"
    assert not (git_workspace / "extra.py").exists()
