"""What a strong agent changed in its isolated copy, file by file, against the base.

Each change is `added`, `changed` or `deleted`, with a unified diff of the text (binary files
are marked and carry no diff; very large ones are summarised). A change is a *conflict* when
the workspace's file is no longer what the copy was made from (the author changed it
meanwhile) and is not already what the agent made: applying it would overwrite the author's
work, so it is shown and never applied.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from sidecar.plans.review.isolation import (
    Isolation,
    base_manifest,
    listed_manifest,
    placed_folders,
)
from sidecar.plans.review.limits import Deadline
from sidecar.plans.review.manifest import FileEntry, entry_for

ChangeStatus = Literal["added", "changed", "deleted"]
MAX_DIFF_SOURCE = 1 << 20
MAX_DIFF_CHARS = 200_000
MAX_TOTAL_DIFF_CHARS = 2_000_000
"""What all of a changeset's diffs may take together (it travels as one interrupt): past it,
the remaining files come without a diff, and say so."""
_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    status: ChangeStatus
    binary: bool = False
    diff: str = ""
    conflict: bool = False
    size: int = 0
    note: str | None = None
    link: bool = False

    @property
    def applicable(self) -> bool:
        """Whether accepting it can bring it into the workspace (not a conflict, not a link)."""
        return not (self.conflict or self.link)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["link"]
        return data


@dataclass(frozen=True, slots=True)
class Changeset:
    files: tuple[FileChange, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def to_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.files]


def same(a: FileEntry | None, b: FileEntry | None) -> bool:
    """Same content (or both absent); the executable bit aside."""
    if a is None or b is None:
        return a is b
    return a.digest == b.digest and a.link == b.link


def _unchanged(before: FileEntry | None, after: FileEntry | None) -> bool:
    if before is None or after is None:
        return before is after
    return same(before, after) and before.executable == after.executable


def compute_changeset(isolation: Isolation, deadline: Deadline) -> Changeset:
    """Every file the agent added, changed or deleted in its copy, sorted by path (files in
    the folders the gate placed there itself, such as the agent's skills, left out).

    Raises:
        ReviewError: the base manifest is unreadable; git failed.
        ReviewTimeoutError: past the deadline.
    """
    base = base_manifest(isolation)
    now = listed_manifest(isolation, deadline)
    placed = placed_folders(isolation)
    changes: list[FileChange] = []
    budget = MAX_TOTAL_DIFF_CHARS
    for path in sorted(base.keys() | now.keys()):
        before, after = base.get(path), now.get(path)
        if _unchanged(before, after) or _placed(path, placed):
            continue
        deadline.check()
        change = _change(isolation, path, before, after)
        if len(change.diff) > budget:
            note = "diff left out: the changeset is too large to show whole"
            change = replace(change, diff="", note=note)
        budget -= len(change.diff)
        changes.append(change)
    return Changeset(tuple(changes))


def _placed(path: str, placed: frozenset[str]) -> bool:
    return bool(placed) and any(str(p) in placed for p in PurePosixPath(path).parents)


def _change(
    isolation: Isolation, path: str, before: FileEntry | None, after: FileEntry | None
) -> FileChange:
    status: ChangeStatus = "added" if before is None else "deleted" if after is None else "changed"
    current = entry_for(isolation.workspace / path)
    conflict = not same(current, before) and not same(current, after)
    if (before is not None and before.link) or (after is not None and after.link):
        target = after.link if after is not None else None
        note = f"symbolic link -> {target}" if target else "symbolic link removed"
        return FileChange(path, status, conflict=conflict, note=note + " (not applied)", link=True)
    # The old side: the workspace's file while it is still the base (or, in a conflict, what
    # the author has there now); the new side: the agent's file.
    old = _read(isolation.workspace / path) if current is not None else b""
    new = _read(isolation.folder / path) if after is not None else b""
    size = after.size if after is not None else 0
    if old is None or new is None:
        return FileChange(path, status, conflict=conflict, size=size, note="too large to show")
    if _is_binary(old) or _is_binary(new):
        return FileChange(path, status, binary=True, conflict=conflict, size=size)
    label_old = "workspace" if conflict else "a"
    diff = "".join(
        difflib.unified_diff(
            old.decode().splitlines(keepends=True),
            new.decode().splitlines(keepends=True),
            fromfile=f"{label_old}/{path}" if status != "added" else "/dev/null",
            tofile=f"b/{path}" if status != "deleted" else "/dev/null",
        )
    )
    note = None
    if len(diff) > MAX_DIFF_CHARS:
        diff, note = diff[:MAX_DIFF_CHARS], "diff truncated"
    return FileChange(path, status, diff=diff, conflict=conflict, size=size, note=note)


def _read(path: Path) -> bytes | None:
    """The file's bytes; None when too large to diff; b"" when missing."""
    try:
        if path.stat().st_size > MAX_DIFF_SOURCE:
            return None
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return b""


def _is_binary(data: bytes) -> bool:
    if b"\0" in data[:_SNIFF]:
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return True
    return False
