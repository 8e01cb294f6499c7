"""Diffs of what a write or edit would do, computed without writing anything.

The approval dialog shows these before the author decides. The functions confine paths exactly
like the real operations and raise the same errors, so a preview that succeeds means the write
would be accepted (barring a race with another writer).
"""

from __future__ import annotations

from pathlib import Path

from .diffs import unified_diff
from .errors import ErrorCode, WorkspaceError
from .models import PreviewResult
from .ops import Limits, load_text, replace_text
from .paths import Expect, Kind, real_root, resolve


def plan_write(root: Path, path: str, content: str, limits: Limits | None = None) -> PreviewResult:
    """Preview writing ``content`` to ``path`` under the real ``root``.

    Raises:
        PathError: Any confinement error the write itself would raise.
        WorkspaceError: ``binary`` or ``too_large`` when the existing file cannot be diffed.
    """
    resolved = resolve(root, path, expect=Expect.FILE, must_exist=False)
    exists = resolved.kind is Kind.FILE
    before = load_text(resolved, limits or Limits()) if exists else None
    diff = unified_diff(resolved.display, before, content)
    return PreviewResult(path=resolved.display, operation="write", exists=exists, diff=diff)


def plan_edit(
    root: Path,
    path: str,
    old: str,
    new: str,
    *,
    replace_all: bool,
    limits: Limits | None = None,
) -> PreviewResult:
    """Preview replacing ``old`` by ``new`` in ``path`` under the real ``root``.

    Raises:
        PathError: Any confinement error the edit itself would raise.
        WorkspaceError: ``empty_old``, ``no_match``, ``ambiguous``, ``binary``, ``too_large``.
    """
    resolved = resolve(root, path, expect=Expect.FILE)
    before = load_text(resolved, limits or Limits())
    after, _ = replace_text(before, old, new, replace_all=replace_all, display=resolved.display)
    diff = unified_diff(resolved.display, before, after)
    return PreviewResult(path=resolved.display, operation="edit", exists=True, diff=diff)


def plan(
    root: Path,
    path: str,
    *,
    content: str | None,
    old: str | None,
    new: str | None,
    replace_all: bool,
    limits: Limits | None = None,
) -> PreviewResult:
    """Dispatch to :func:`plan_write` (``content``) or :func:`plan_edit` (``old`` and ``new``).

    Raises:
        WorkspaceError: ``invalid_arguments`` unless exactly one of the two forms is given.
    """
    if content is not None and old is None and new is None:
        return plan_write(root, path, content, limits)
    if content is None and old is not None and new is not None:
        return plan_edit(root, path, old, new, replace_all=replace_all, limits=limits)
    raise WorkspaceError(
        ErrorCode.INVALID_ARGUMENTS, "give either content (write) or both old and new (edit)"
    )


def preview_write(root: Path, path: str, content: str) -> str:
    """Unified diff of writing ``content`` to ``path`` in the workspace at ``root``.

    Raises:
        PathError, WorkspaceError: As the ``write`` tool would (plus ``binary``/``too_large``).
    """
    return plan_write(real_root(root), path, content).diff


def preview_edit(root: Path, path: str, old: str, new: str, replace_all: bool = False) -> str:
    """Unified diff of the ``edit`` tool's search-and-replace, without writing.

    Raises:
        PathError, WorkspaceError: As the ``edit`` tool would.
    """
    return plan_edit(real_root(root), path, old, new, replace_all=replace_all).diff
