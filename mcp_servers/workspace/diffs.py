"""Line splitting and unified diffs for reads, searches, previews and edit results."""

from __future__ import annotations

import difflib

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(display: str, before: str | None, after: str) -> str:
    """Unified diff from ``before`` (None for a new file) to ``after``, git-style headers.

    Returns ``""`` when nothing changes.
    """
    old_name = "/dev/null" if before is None else f"a/{display}"
    lines = difflib.unified_diff(
        _diff_lines(before or ""), _diff_lines(after), fromfile=old_name, tofile=f"b/{display}"
    )
    return "".join(lines)


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only, keeping the ends (unlike ``str.splitlines``, which also breaks on
    ``\\r``, form feeds and Unicode separators that editors show inside a line)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _diff_lines(text: str) -> list[str]:
    """Split keeping ends; mark a missing final newline the way ``diff`` and git do."""
    lines = split_lines(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n" + _NO_NEWLINE
    return lines
