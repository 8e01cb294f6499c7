"""Typed access to RE2 (google-re2), the linear-time regular expression engine.

Python's ``re`` backtracks: a pattern with nested quantifiers can take minutes on a short line
while holding the GIL. RE2 matches in time linear in the input, releases the GIL while matching,
and refuses what it cannot match that way (backreferences, lookaround). google-re2 ships no type
information; this module declares the part Atrium uses.
"""

from __future__ import annotations

from typing import Protocol, cast

import re2 as _untyped_re2  # pyright: ignore[reportMissingTypeStubs]


class Options(Protocol):
    log_errors: bool
    never_capture: bool
    case_sensitive: bool
    literal: bool
    max_mem: int


class Pattern(Protocol):
    def search(self, text: str) -> object | None: ...

    def sub(self, replacement: str, text: str) -> str: ...


class _Re2(Protocol):
    error: type[Exception]

    def Options(self) -> Options: ...

    def compile(self, pattern: str, options: Options) -> Pattern: ...


_re2 = cast(_Re2, _untyped_re2)
Error: type[Exception] = _re2.error


def options(*, case_sensitive: bool = True, literal: bool = False) -> Options:
    """Options with error logging off (a refused pattern is an exception, not a log line)."""
    made = _re2.Options()
    made.log_errors = False
    made.case_sensitive = case_sensitive
    made.literal = literal
    return made


def compile_pattern(pattern: str, opts: Options | None = None) -> Pattern:
    """Raises:
    Error: RE2 cannot compile the pattern."""
    return _re2.compile(pattern, opts if opts is not None else options())


def reason(exc: Exception) -> str:
    """RE2's message for a refused pattern, as text."""
    detail: object = exc.args[0] if exc.args else exc
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
