"""Line matching for search: a linear-time engine, so no pattern can stall the process.

Python's ``re`` backtracks: ``(a+)+$`` against 30 characters takes minutes and holds the GIL the
whole time, freezing every thread of the process (the workspace server runs inside the sidecar).
RE2 matches in time linear in the input and releases the GIL while it matches. It has no
backreferences or lookaround; a pattern that needs them is refused with ``invalid_regex`` and a
message that says so, never run on a backtracking engine instead.

Plain (non-regex) queries go through RE2 too, as literals, so case folding means the same in both.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_servers import linear_re

from .errors import ErrorCode, WorkspaceError

LineMatcher = Callable[[str], bool]

# RE2's program for one pattern may not grow past this (the default is 8 MiB): huge counted
# repetitions such as ``(a{1000}){1000}`` are refused at compile time instead of eating memory.
MAX_PROGRAM_BYTES = 8 << 20


def line_matcher(query: str, *, regex: bool, case_sensitive: bool) -> LineMatcher:
    """A predicate telling whether a line contains ``query`` (a literal, or an RE2 pattern).

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
    search = pattern.search
    return lambda line: search(line) is not None
