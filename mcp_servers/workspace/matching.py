"""Line matching for search: a linear-time engine, so no pattern can stall the process.

Python's ``re`` backtracks: ``(a+)+$`` against 30 characters takes minutes and holds the GIL the
whole time, freezing every thread of the process (the workspace server runs inside the sidecar).
RE2 matches in time linear in the input and releases the GIL while it matches. It has no
backreferences or lookaround; a pattern that needs them is refused with ``invalid_regex`` and a
message that says so, never run on a backtracking engine instead.

Plain (non-regex) queries go through RE2 too, as literals, so case folding means the same in both.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from mcp_servers import linear_re

from .errors import ErrorCode, WorkspaceError

# RE2's program for one pattern may not grow past this (the default is 8 MiB): huge counted
# repetitions such as ``(a{1000}){1000}`` are refused at compile time instead of eating memory.
MAX_PROGRAM_BYTES = 8 << 20


@dataclass(frozen=True)
class LineMatcher:
    """Tells whether a line contains the query; ``may_match`` rules out a whole file first."""

    line_pattern: linear_re.Pattern
    text_pattern: linear_re.Pattern | None

    def __call__(self, line: str) -> bool:
        return self.line_pattern.search(line) is not None

    def may_match(self, text: str) -> bool:
        """False only when no line of ``text`` can match: one linear pass in RE2, which
        releases the GIL, instead of a Python loop over every line of a file without a hit."""
        if self.text_pattern is None or "\r" in text:  # `$` would not match before "\r\n"
            return True
        return self.text_pattern.search(text) is not None


def numbered_lines(text: str) -> Generator[tuple[int, str]]:
    """``(number, line)`` without its line end, one at a time: no list of a million strings
    built (or freed) in one call that holds the GIL."""
    start, number, size = 0, 1, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            yield number, text[start:].rstrip("\r")
            return
        yield number, text[start:end].rstrip("\r")
        start, number = end + 1, number + 1


def line_matcher(query: str, *, regex: bool, case_sensitive: bool) -> LineMatcher:
    """A matcher telling whether a line contains ``query`` (a literal, or an RE2 pattern).

    Raises:
        WorkspaceError: ``invalid_arguments`` for an empty query; ``invalid_regex`` for a
            pattern RE2 cannot compile (syntax errors, backreferences, lookaround).
    """
    if query == "":
        raise WorkspaceError(ErrorCode.INVALID_ARGUMENTS, "query must not be empty")
    options = linear_re.options(case_sensitive=case_sensitive, literal=not regex)
    options.never_capture = True
    options.max_mem = MAX_PROGRAM_BYTES
    try:
        pattern = linear_re.compile_pattern(query, options)
    except linear_re.Error as exc:
        raise WorkspaceError(
            ErrorCode.INVALID_REGEX,
            f"invalid regular expression for the linear-time engine (RE2 syntax: no "
            f"backreferences or lookaround): {linear_re.reason(exc)}",
        ) from None
    text_pattern = pattern
    if regex:  # `^` and `$` must keep meaning line start and end over a whole file
        try:
            text_pattern = linear_re.compile_pattern(f"(?m){query}", options)
        except linear_re.Error:
            text_pattern = None
    return LineMatcher(pattern, text_pattern)
