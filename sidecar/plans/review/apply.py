"""Bring the files the author accepted from the isolated copy into the workspace.

Each accepted file is checked against the base right before it is written: a workspace file
that is no longer the base (the author changed it meanwhile) is a conflict and stays as it is;
one that already is the agent's version counts as applied (so applying twice, e.g. after a
crash, writes nothing twice). Writes are atomic (a temporary file in the same folder, then a
rename) and never follow a symbolic link out of the workspace. Files not accepted are not
touched, so rejecting everything leaves the workspace unchanged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from sidecar.plans.review.changeset import same
from sidecar.plans.review.isolation import Isolation, base_manifest
from sidecar.plans.review.limits import Deadline
from sidecar.plans.review.manifest import FileEntry, entry_for


@dataclass(frozen=True, slots=True)
class ApplyReport:
    """`refused`: (path, why) for files that cannot be applied at all."""

    applied: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "applied": list(self.applied),
            "conflicts": list(self.conflicts),
            "refused": [{"path": p, "reason": r} for p, r in self.refused],
        }


def apply_changes(isolation: Isolation, accepted: Iterable[str], deadline: Deadline) -> ApplyReport:
    """Apply the accepted paths (relative, as the changeset names them).

    Raises:
        ReviewError: the base manifest is unreadable.
        ReviewTimeoutError: past the deadline (files applied so far stay applied).
    """
    base = base_manifest(isolation)
    applied: list[str] = []
    conflicts: list[str] = []
    refused: list[tuple[str, str]] = []
    for path in dict.fromkeys(accepted):
        deadline.check()
        problem = _unsafe(isolation.workspace, path)
        if problem is not None:
            refused.append((path, problem))
            continue
        agent = entry_for(isolation.folder / path)
        current = entry_for(isolation.workspace / path)
        before = base.get(path)
        if same(current, agent):
            if not same(before, agent):
                applied.append(path)
            else:
                refused.append((path, "not changed by the agent"))
        elif not same(current, before):
            conflicts.append(path)
        elif agent is not None and agent.link is not None:
            refused.append((path, "symbolic links are not applied"))
        else:
            _write(isolation, path, agent)
            applied.append(path)
    return ApplyReport(tuple(applied), tuple(conflicts), tuple(refused))


def _unsafe(workspace: Path, path: str) -> str | None:
    """Why `path` may not be written in the workspace, or None."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or ".git" in pure.parts:
        return "not a path inside the workspace"
    root = workspace.resolve()
    parent = (root / pure).parent
    # Every existing folder on the way must be a real folder inside the workspace.
    probe = root
    for part in pure.parent.parts:
        probe = probe / part
        if probe.is_symlink() or (probe.exists() and not probe.is_dir()):
            return "a folder on its path is a link or a file"
    if parent.exists() and not parent.resolve().is_relative_to(root):
        return "not a path inside the workspace"
    return None


def _write(isolation: Isolation, path: str, agent: FileEntry | None) -> None:
    target = isolation.workspace / path
    if agent is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".atrium-", dir=target.parent)
    os.close(handle)
    try:
        shutil.copy2(isolation.folder / path, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
