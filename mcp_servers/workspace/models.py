"""Structured results of the workspace tools (published as each tool's ``outputSchema``).

Every ``path`` in a result is relative to the workspace root with ``/`` separators (``.`` is the
root itself), exactly as a caller would pass it back.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

EntryType = Literal["file", "dir", "symlink", "other"]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Entry(_Result):
    """One directory entry. ``size`` is in bytes for files and None otherwise."""

    path: str
    name: str
    type: EntryType
    size: int | None


class ListResult(_Result):
    """Entries of a directory; ``truncated`` when more matched than were returned."""

    path: str
    entries: list[Entry]
    truncated: bool


class ReadResult(_Result):
    """A slice of a text file. Lines are 1-based; ``end_line`` is 0 when nothing was returned."""

    path: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    truncated: bool
    size: int


class WriteResult(_Result):
    """Outcome of a write: ``created`` is False when an existing file was replaced."""

    path: str
    bytes_written: int
    created: bool


class EditResult(_Result):
    """Outcome of an edit, with the unified diff of what changed."""

    path: str
    replacements: int
    diff: str


class SearchMatch(_Result):
    """One matching line (1-based ``line``; ``text`` is clipped to a bounded length)."""

    path: str
    line: int
    text: str


class SearchResult(_Result):
    """Matches in file order; ``truncated`` when the result, file or time budget ran out
    (``timed_out`` for the time budget)."""

    path: str
    matches: list[SearchMatch]
    truncated: bool
    files_scanned: int
    timed_out: bool = False


class PreviewResult(_Result):
    """The unified diff a write or edit would make, computed without writing anything."""

    path: str
    operation: Literal["write", "edit"]
    exists: bool
    diff: str
