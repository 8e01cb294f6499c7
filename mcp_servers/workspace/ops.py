"""The workspace operations as plain functions of a real root (no MCP here).

Each function confines its path through :mod:`.paths`, does its I/O through :mod:`.fileio`, and
raises :class:`.errors.WorkspaceError` with a stable code on refusal. The MCP tools in
:mod:`.server` and the preview helpers in :mod:`.preview` are thin layers over these.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from . import fileio
from .diffs import split_lines, unified_diff
from .errors import ErrorCode, WorkspaceError
from .matching import line_matcher, numbered_lines
from .models import (
    EditResult,
    Entry,
    ListResult,
    ReadResult,
    SearchMatch,
    SearchResult,
    WriteResult,
)
from .paths import Expect, Kind, Resolved, resolve


@dataclass(frozen=True)
class Limits:
    """Bounds that keep every tool call small and fast."""

    max_read_bytes: int = 5 * 1024 * 1024
    max_list_entries: int = 5000
    max_search_results: int = 1000
    max_search_files: int = 20000
    max_line_chars: int = 500
    max_search_seconds: float = 10.0
    max_sweep_seconds: float = 1.0
    """How long a starting server looks for the temporary files of writes that died."""


def decode_text(data: bytes, display: str) -> str:
    """Decode UTF-8 text, refusing binary content (a NUL byte or invalid UTF-8).

    Raises:
        WorkspaceError: ``binary``.
    """
    if b"\x00" in data[:8192]:
        raise WorkspaceError(ErrorCode.BINARY, f"file looks binary: {display!r}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkspaceError(ErrorCode.BINARY, f"file is not UTF-8 text: {display!r}") from None


def load_text(resolved: Resolved, limits: Limits) -> str:
    """Read a resolved existing file as text (bounded by ``limits.max_read_bytes``)."""
    data = fileio.read_file(
        resolved.root, resolved.real_parts, resolved.display, limits.max_read_bytes
    )
    return decode_text(data, resolved.display)


def list_dir(
    root: Path, path: str, *, glob: str | None, recursive: bool, max_entries: int, limits: Limits
) -> ListResult:
    """List a directory, optionally recursively and filtered by a glob (see :func:`glob_match`).

    A walk past the time budget (``limits.max_search_seconds``, e.g. a glob matching nothing in
    a huge tree) stops with ``truncated``."""
    resolved = resolve(root, path, expect=Expect.DIR)
    cap = max(1, min(max_entries, limits.max_list_entries))
    base = len(resolved.real_parts)
    entries: list[Entry] = []
    truncated = False
    deadline = time.monotonic() + limits.max_search_seconds
    walker = fileio.walk(root, resolved.real_parts, resolved.display, recursive=recursive)
    with closing(walker) as found:
        for seen, item in enumerate(found, start=1):
            if seen % 1024 == 0 and time.monotonic() > deadline:
                truncated = True
                break
            rel = "/".join(item.parts[base:])
            if glob is not None and not glob_match(glob, rel, item.name):
                continue
            if len(entries) == cap:
                truncated = True
                break
            full = _join(resolved.display, rel)
            entries.append(Entry(path=full, name=item.name, type=item.kind, size=item.size))
    return ListResult(path=resolved.display, entries=entries, truncated=truncated)


def glob_match(pattern: str, rel: str, name: str) -> bool:
    """Match ``pattern`` against the entry name, or against its relative path if it has a ``/``."""
    return fnmatch.fnmatchcase(rel if "/" in pattern else name, pattern)


def _join(display: str, rel: str) -> str:
    return rel if display == "." else f"{display}/{rel}"


def read_text(
    root: Path, path: str, *, offset: int, limit: int | None, limits: Limits
) -> ReadResult:
    """Read lines ``offset+1 .. offset+limit`` of a text file (all remaining if no limit)."""
    if offset < 0 or (limit is not None and limit < 1):
        raise WorkspaceError(ErrorCode.INVALID_ARGUMENTS, "offset must be >= 0 and limit >= 1")
    resolved = resolve(root, path, expect=Expect.FILE)
    data = fileio.read_file(root, resolved.real_parts, resolved.display, limits.max_read_bytes)
    lines = split_lines(decode_text(data, resolved.display))
    end = len(lines) if limit is None else min(len(lines), offset + limit)
    chosen = lines[offset:end]
    return ReadResult(
        path=resolved.display,
        content="".join(chosen),
        start_line=offset + 1,
        end_line=offset + len(chosen) if chosen else 0,
        total_lines=len(lines),
        truncated=end < len(lines),
        size=len(data),
    )


def write_text(root: Path, path: str, content: str) -> WriteResult:
    """Create or replace a UTF-8 text file, creating missing parent directories."""
    resolved = resolve(root, path, expect=Expect.FILE, must_exist=False)
    data = content.encode("utf-8")
    created = fileio.write_file(root, resolved.real_parts, resolved.display, data)
    return WriteResult(path=resolved.display, bytes_written=len(data), created=created)


def edit_text(
    root: Path, path: str, old: str, new: str, *, replace_all: bool, limits: Limits
) -> EditResult:
    """Search-and-replace in a text file (see :func:`replace_text`) and write it back."""
    resolved = resolve(root, path, expect=Expect.FILE)
    before = load_text(resolved, limits)
    after, count = replace_text(before, old, new, replace_all=replace_all, display=resolved.display)
    fileio.write_file(root, resolved.real_parts, resolved.display, after.encode("utf-8"))
    diff = unified_diff(resolved.display, before, after)
    return EditResult(path=resolved.display, replacements=count, diff=diff)


def replace_text(
    text: str, old: str, new: str, *, replace_all: bool, display: str
) -> tuple[str, int]:
    """Replace ``old`` by ``new``; ``old`` must occur exactly once unless ``replace_all``.

    Overlapping occurrences count as ambiguous too (``"aa"`` in ``"aaa"``).

    Raises:
        WorkspaceError: ``empty_old``, ``no_match`` or ``ambiguous``.
    """
    if old == "":
        raise WorkspaceError(ErrorCode.EMPTY_OLD, "old text must not be empty")
    first = text.find(old)
    if first < 0:
        raise WorkspaceError(ErrorCode.NO_MATCH, f"old text not found in {display!r}")
    if replace_all:
        return text.replace(old, new), text.count(old)
    if text.find(old, first + 1) >= 0:
        raise WorkspaceError(
            ErrorCode.AMBIGUOUS,
            f"old text occurs more than once in {display!r}; add context or set replace_all",
        )
    return text[:first] + new + text[first + len(old) :], 1


def search(
    root: Path,
    path: str,
    query: str,
    *,
    regex: bool,
    case_sensitive: bool,
    glob: str | None,
    max_results: int,
    limits: Limits,
) -> SearchResult:
    """Find lines containing ``query`` (a literal or an RE2 pattern) in text files under ``path``.

    Binary, over-large, hard-linked and unreadable files are skipped; symlinks are never
    followed. The search stops with ``truncated`` when the result cap, the file budget or the
    time budget (``limits.max_search_seconds``; then also ``timed_out``) runs out.
    """
    matcher = line_matcher(query, regex=regex, case_sensitive=case_sensitive)
    resolved = resolve(root, path)
    cap = max(1, min(max_results, limits.max_search_results))
    deadline = time.monotonic() + limits.max_search_seconds
    matches: list[SearchMatch] = []
    scanned = 0

    def result(*, truncated: bool, timed_out: bool = False) -> SearchResult:
        return SearchResult(
            path=resolved.display,
            matches=matches,
            truncated=truncated,
            files_scanned=scanned,
            timed_out=timed_out,
        )

    for rel, text in _texts(resolved, glob, limits):
        scanned += 1
        lines = numbered_lines(text) if matcher.may_match(text) else iter(())
        for number, line in lines:
            if matcher(line):
                if len(matches) == cap:
                    return result(truncated=True)
                clipped = line[: limits.max_line_chars]
                matches.append(SearchMatch(path=rel, line=number, text=clipped))
            if number % 1024 == 0 and time.monotonic() > deadline:
                return result(truncated=True, timed_out=True)
        if scanned >= limits.max_search_files:
            return result(truncated=True)
        if time.monotonic() > deadline:
            return result(truncated=True, timed_out=True)
    return result(truncated=False)


def _texts(resolved: Resolved, glob: str | None, limits: Limits) -> Generator[tuple[str, str]]:
    """Yield ``(path, text)`` for each searchable text file under ``resolved``."""
    if resolved.kind is Kind.FILE:
        try:
            text = load_text(resolved, limits)
        except WorkspaceError:
            return
        yield resolved.display, text
        return
    base = len(resolved.real_parts)
    walker = fileio.walk(resolved.root, resolved.real_parts, resolved.display, recursive=True)
    with closing(walker) as found:
        for item in found:
            rel = "/".join(item.parts[base:])
            if item.kind != "file" or (glob is not None and not glob_match(glob, rel, item.name)):
                continue
            if item.size is not None and item.size > limits.max_read_bytes:
                continue
            try:
                data = fileio.read_at(item.dir_fd, item.name, rel, limits.max_read_bytes)
                text = decode_text(data, rel)
            except WorkspaceError:
                continue
            yield _join(resolved.display, rel), text
