"""The isolated copy: a snapshot of a plain folder, a worktree of a git repository (carrying the
author's uncommitted state), found again on resume, removed without a trace, bounded in time."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.plans.review import isolation as isolation_module
from sidecar.plans.review.isolation import (
    create_isolation,
    load_isolation,
    remove_isolation,
)
from sidecar.plans.review.limits import Deadline, ReviewError, ReviewTimeoutError
from sidecar.plans.review.manifest import scan_tree
from tests.sidecar.plans.review.conftest import git


def _worktrees(repo: Path) -> list[str]:
    lines = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


def test_a_plain_folder_gets_a_snapshot_copy_with_the_same_files(
    plain_workspace: Path, tmp_path: Path
):
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    assert made.kind == "snapshot"
    assert made.folder != plain_workspace
    assert scan_tree(made.folder, Deadline(30)) == scan_tree(plain_workspace, Deadline(30))


def test_a_snapshot_leaves_git_folders_out(plain_workspace: Path, tmp_path: Path):
    (plain_workspace / "vendor" / ".git").mkdir(parents=True)
    (plain_workspace / "vendor" / ".git" / "HEAD").write_text("ref: x\n")
    made = create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    assert not (made.folder / "vendor" / ".git").exists()


def test_a_workspace_too_large_for_a_snapshot_is_refused_and_nothing_is_left(
    plain_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(isolation_module, "MAX_SNAPSHOT_FILES", 2)
    with pytest.raises(ReviewError, match="more than 2 files"):
        create_isolation(plain_workspace, tmp_path / "iso", Deadline(30))
    assert not (tmp_path / "iso").exists()


def test_a_missing_workspace_is_refused(tmp_path: Path):
    with pytest.raises(ReviewError, match="not a folder"):
        create_isolation(tmp_path / "nowhere", tmp_path / "iso", Deadline(30))


def test_a_git_workspace_gets_a_worktree_carrying_the_uncommitted_state(
    git_workspace: Path, tmp_path: Path
):
    (git_workspace / "notes.txt").write_text("one\ntwo\nthree (not committed)\n")
    (git_workspace / "src" / "app.py").unlink()
    (git_workspace / "draft.md").write_text("untracked\n")
    (git_workspace / "build").mkdir()
    (git_workspace / "build" / "out.o").write_bytes(b"\0ignored")
    made = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    assert made.kind == "worktree"
    assert str(made.worktree) in _worktrees(git_workspace)
    assert (made.folder / "notes.txt").read_text().endswith("three (not committed)\n")
    assert not (made.folder / "src" / "app.py").exists()
    assert (made.folder / "draft.md").read_text() == "untracked\n"
    assert not (made.folder / "build").exists()  # ignored files are not copied
    assert git(git_workspace, "status", "--porcelain") != ""  # the workspace is untouched


def test_removing_a_worktree_unregisters_it_and_deletes_its_folder(
    git_workspace: Path, tmp_path: Path
):
    made = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    (made.folder / "new.txt").write_text("agent's work\n")
    remove_isolation(made, Deadline(30))
    assert _worktrees(git_workspace) == [str(git_workspace.resolve())]
    assert not (tmp_path / "iso").exists()
    remove_isolation(made, Deadline(30))  # a second removal does nothing


def test_a_subfolder_of_a_repository_maps_to_the_same_subfolder_of_the_worktree(
    git_workspace: Path, tmp_path: Path
):
    made = create_isolation(git_workspace / "src", tmp_path / "iso", Deadline(30))
    assert made.kind == "worktree"
    assert made.folder == made.worktree / "src"
    assert (made.folder / "app.py").read_text() == "print('hi')\n"


def test_a_repository_without_commits_gets_a_snapshot(tmp_path: Path):
    ws = tmp_path / "empty-repo"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("a\n")
    made = create_isolation(ws, tmp_path / "iso", Deadline(30))
    assert made.kind == "snapshot"
    assert (made.folder / "a.txt").read_text() == "a\n"


def test_the_repositorys_hooks_do_not_run_when_the_worktree_is_added(
    git_workspace: Path, tmp_path: Path
):
    marker = tmp_path / "hook-ran"
    hook = git_workspace / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    assert not marker.exists()


def test_creating_again_finds_the_same_isolation_with_the_agents_work_in_it(
    git_workspace: Path, tmp_path: Path
):
    first = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    (first.folder / "work.txt").write_text("kept\n")
    again = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    assert again == first == load_isolation(tmp_path / "iso")
    assert (again.folder / "work.txt").read_text() == "kept\n"


def test_a_half_made_worktree_is_removed_and_made_again(git_workspace: Path, tmp_path: Path):
    made = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    (made.root / "isolation.json").unlink()  # as if the sidecar died mid-creation
    (made.folder / "stale.txt").write_text("from the dead attempt\n")
    again = create_isolation(git_workspace, tmp_path / "iso", Deadline(30))
    assert not (again.folder / "stale.txt").exists()
    assert _worktrees(git_workspace).count(str(again.worktree)) == 1


def test_a_step_past_its_deadline_raises_and_leaves_nothing(plain_workspace: Path, tmp_path: Path):
    with pytest.raises(ReviewTimeoutError):
        create_isolation(plain_workspace, tmp_path / "iso", Deadline(0))
    assert not (tmp_path / "iso").exists()


def test_a_copy_inside_the_workspace_is_refused(plain_workspace: Path):
    with pytest.raises(ReviewError, match="inside the workspace"):
        create_isolation(plain_workspace, plain_workspace / ".atrium" / "iso", Deadline(30))
    assert not (plain_workspace / ".atrium").exists()
