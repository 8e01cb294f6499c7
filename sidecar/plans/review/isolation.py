"""The isolated copy a writing strong agent works in, instead of the author's workspace.

- **worktree**: the workspace is inside a git repository with at least one commit. A detached
  worktree of HEAD is added under the isolation's folder (hooks disabled), then the workspace's
  uncommitted state is laid over it (changed, untracked-but-not-ignored and deleted files), so
  the agent starts from what the author sees. Ignored files (build output, dependencies) are not
  copied. The agent's folder is the worktree's counterpart of the workspace (a repository's
  subfolder when the workspace is one).
- **snapshot**: anything else. The workspace is copied (symlinks as links, `.git` folders left
  out), within a file-count and size limit.

Either way the base manifest (`base.json`) records what the copy held when the agent started,
and `isolation.json` what kind it is, so a resumed task (after a crash) finds it again. Folders
the gate itself fills or empties before the agent starts (the skills its profile gives it) are
recorded in `placed.json`: they are not the agent's work, and the changeset leaves them out.
Removal takes the worktree out of the repository's list (`git worktree remove`, then `prune`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from sidecar.plans.review import manifest
from sidecar.plans.review.limits import Deadline, ReviewError, ReviewTimeoutError
from sidecar.plans.review.manifest import Manifest

IsolationKind = Literal["worktree", "snapshot"]
MAX_SNAPSHOT_FILES = 50_000
MAX_SNAPSHOT_BYTES = 2 << 30
_META = "isolation.json"
_BASE = "base.json"
_PLACED = "placed.json"
_WORK = "work"
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


@dataclass(frozen=True, slots=True)
class Isolation:
    """An isolated copy: `folder` is where the agent works; `workspace` is what it mirrors."""

    kind: IsolationKind
    workspace: Path
    root: Path
    folder: Path
    repo: Path | None = None

    @property
    def worktree(self) -> Path:
        return self.root / _WORK

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "workspace": str(self.workspace),
            "root": str(self.root),
            "folder": str(self.folder),
            "repo": str(self.repo) if self.repo else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Isolation:
        repo = data.get("repo")
        return cls(
            kind=cast(IsolationKind, data["kind"]),
            workspace=Path(data["workspace"]),
            root=Path(data["root"]),
            folder=Path(data["folder"]),
            repo=Path(repo) if repo else None,
        )


def create_isolation(workspace: Path, root: Path, deadline: Deadline) -> Isolation:
    """Make (or find again) the isolated copy of `workspace` under `root`.

    Raises:
        ReviewError: the workspace is missing, or too large for a snapshot; `root` is inside
            the workspace; git failed.
        ReviewTimeoutError: past the deadline (what was made is removed).
    """
    existing = load_isolation(root)
    if existing is not None:
        return existing
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise ReviewError(f"the workspace {workspace} is not a folder")
    if root.resolve().is_relative_to(workspace):
        # The agent's copy would be part of what it copies (and of what it may change).
        raise ReviewError(f"the isolated copy {root} would be inside the workspace")
    if root.exists():
        _discard_partial(root, deadline)
    root.mkdir(parents=True)
    try:
        repo = _repository(workspace, deadline)
        if repo is not None:
            isolation = _make_worktree(workspace, root, repo, deadline)
        else:
            isolation = _make_snapshot(workspace, root, deadline)
        base = listed_manifest(isolation, deadline)
        (root / _BASE).write_text(manifest.dump(base), encoding="utf-8")
        (root / _META).write_text(json.dumps(isolation.to_json()), encoding="utf-8")
    except (ReviewError, OSError):
        _discard_partial(root, Deadline(60))
        raise
    return isolation


def load_isolation(root: Path) -> Isolation | None:
    """The isolation made under `root`, if one was completely made there."""
    try:
        data = json.loads((root / _META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (root / _BASE).is_file():
        return None
    return Isolation.from_json(cast(dict[str, Any], data))


def base_manifest(isolation: Isolation) -> Manifest:
    """Raises:
    ReviewError: the base manifest is missing or unreadable."""
    try:
        text = (isolation.root / _BASE).read_text(encoding="utf-8")
    except OSError as exc:
        raise ReviewError(f"the base manifest is missing: {exc.strerror}") from exc
    return manifest.load(text)


def mark_placed(isolation: Isolation, folders: Iterable[str]) -> None:
    """Add folders of the copy (POSIX paths relative to its `folder`) to those the gate filled
    or emptied itself before the agent started; nothing under them is the agent's change.

    Raises:
        OSError: the record could not be written.
    """
    known = placed_folders(isolation) | set(folders)
    target = isolation.root / _PLACED
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(sorted(known)), encoding="utf-8")
    tmp.replace(target)


def placed_folders(isolation: Isolation) -> frozenset[str]:
    """The folders `mark_placed` recorded (none when it never ran)."""
    try:
        data: object = json.loads((isolation.root / _PLACED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    if not isinstance(data, list):
        return frozenset()
    return frozenset(str(f) for f in cast(list[object], data))


def listed_manifest(isolation: Isolation, deadline: Deadline) -> Manifest:
    """What the agent's folder holds now: for a worktree, the files git lists (tracked and
    untracked, ignored ones left out); for a snapshot, every file.

    Raises:
        ReviewError: git failed.
        ReviewTimeoutError: past the deadline.
    """
    if isolation.kind == "snapshot":
        return manifest.scan_tree(isolation.folder, deadline)
    out = _git(
        isolation.folder,
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        deadline,
    )
    paths = [p for p in out.split("\0") if p and Path(p).name != ".git"]
    return manifest.scan_paths(isolation.folder, paths, deadline)


def remove_isolation(isolation: Isolation, deadline: Deadline) -> None:
    """Remove the copy (and, for a worktree, its registration in the repository). Removing
    one already removed does nothing.

    Raises:
        ReviewError: the folder could not be removed.
        ReviewTimeoutError: past the deadline.
    """
    if isolation.kind == "worktree" and isolation.repo is not None:
        _forget_worktree(isolation.repo, isolation.worktree, deadline)
    _rmtree(isolation.root)


def _discard_partial(root: Path, deadline: Deadline) -> None:
    """A half-made isolation (a crash mid-creation): remove it and any worktree it left."""
    work = root / _WORK
    if (work / ".git").is_file():
        text = (work / ".git").read_text(encoding="utf-8", errors="replace").strip()
        gitdir = Path(text.removeprefix("gitdir:").strip())
        common = gitdir.parent.parent  # <repo>/.git/worktrees/<name> -> <repo>/.git
        if common.is_dir():
            _forget_worktree(common, work, deadline)
    _rmtree(root)


def _forget_worktree(repo: Path, work: Path, deadline: Deadline) -> None:
    if not repo.exists():
        return
    try:
        _git(repo, ["worktree", "remove", "--force", "--force", str(work)], deadline)
    except ReviewTimeoutError:
        raise
    except ReviewError:
        pass  # not registered any more, or already gone: prune below settles it
    _rmtree(work)
    _git(repo, ["worktree", "prune"], deadline)


def _rmtree(path: Path) -> None:
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ReviewError(f"could not remove {path}: {exc.strerror}") from exc


def _repository(workspace: Path, deadline: Deadline) -> Path | None:
    """The top of the git repository holding the workspace, if it has a commit."""
    if shutil.which("git") is None:
        return None
    try:
        top = _git(workspace, ["rev-parse", "--show-toplevel"], deadline).strip()
        _git(workspace, ["rev-parse", "--verify", "--quiet", "HEAD"], deadline)
    except ReviewTimeoutError:
        raise
    except ReviewError:
        return None
    return Path(top).resolve() if top else None


def _make_worktree(workspace: Path, root: Path, repo: Path, deadline: Deadline) -> Isolation:
    work = root / _WORK
    _git(
        repo, ["-c", "core.hooksPath=/dev/null", "worktree", "add", "--detach", str(work)], deadline
    )
    folder = work / workspace.relative_to(repo)
    status = _git(
        workspace,
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", "."],
        deadline,
    )
    for record in status.split("\0"):
        if len(record) < 4:
            continue
        deadline.check()
        rel = record[3:]
        _mirror(repo / rel, work / rel)
    folder.mkdir(parents=True, exist_ok=True)
    return Isolation("worktree", workspace, root, folder, repo)


def _mirror(source: Path, target: Path) -> None:
    """Make `target` what `source` is (a file, a link, or nothing)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    if source.is_symlink():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.readlink(source))
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _make_snapshot(workspace: Path, root: Path, deadline: Deadline) -> Isolation:
    # Counting first refuses a huge workspace before copying any of it.
    manifest.scan_tree(
        workspace, deadline, max_files=MAX_SNAPSHOT_FILES, max_bytes=MAX_SNAPSHOT_BYTES
    )
    work = root / _WORK

    def copy(src: str, dst: str) -> object:
        deadline.check()
        return shutil.copy2(src, dst, follow_symlinks=False)

    shutil.copytree(
        workspace,
        work,
        symlinks=True,
        ignore=shutil.ignore_patterns(*manifest.SKIPPED_DIRS),
        copy_function=copy,
    )
    return Isolation("snapshot", workspace, root, work)


def _git(cwd: Path, args: list[str], deadline: Deadline) -> str:
    """Run git in `cwd`; its output.

    Raises:
        ReviewError: git failed (its message included).
        ReviewTimeoutError: past the deadline.
    """
    env = {**os.environ, **_GIT_ENV}
    command = next(a for a in args if not a.startswith("-") and "=" not in a)
    try:
        done = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=deadline.remaining(),
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ReviewTimeoutError(f"git {command} took longer than {deadline.seconds:g}s") from exc
    except OSError as exc:
        raise ReviewError(f"could not run git: {exc.strerror}") from exc
    if done.returncode != 0:
        raise ReviewError(f"git {command} failed: {done.stderr.strip()[:500]}")
    return done.stdout
