"""Typed workspace errors with stable codes.

Every refusal the workspace server makes carries a short, stable ``code`` so callers (the sidecar,
tests) can branch on it without parsing prose. The tool layer turns these into MCP ``isError``
results whose text starts with ``[<code>]``.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable error codes. Path confinement codes first, then content and edit codes."""

    EMPTY = "empty"
    ABSOLUTE = "absolute"
    PARENT_ESCAPE = "parent_escape"
    HOME = "home"
    NUL = "nul"
    INVALID_CHAR = "invalid_char"
    BLANK_NAME = "blank_name"
    TOO_LONG = "too_long"
    SYMLINK_ESCAPE = "symlink_escape"
    SYMLINK_LOOP = "symlink_loop"
    NOT_REGULAR = "not_regular"
    HARD_LINK = "hard_link"
    NOT_FOUND = "not_found"
    NOT_A_DIRECTORY = "not_a_directory"
    IS_A_DIRECTORY = "is_a_directory"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    NO_MATCH = "no_match"
    AMBIGUOUS = "ambiguous"
    EMPTY_OLD = "empty_old"
    INVALID_REGEX = "invalid_regex"
    INVALID_ARGUMENTS = "invalid_arguments"
    PERMISSION_DENIED = "permission_denied"
    IO_ERROR = "io_error"


class WorkspaceError(Exception):
    """A refusal or failure of a workspace operation, with a stable ``code``."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"[{code.value}] {message}")
        self.code = code
        self.message = message


class PathError(WorkspaceError):
    """A path was refused by confinement or does not name what the operation needs."""

    def __init__(self, code: ErrorCode, path: str, message: str) -> None:
        super().__init__(code, f"{message}: {path!r}")
        self.path = path


def io_error(path: str, exc: OSError) -> PathError:
    """Map an unexpected OSError to a typed error without leaking absolute host paths."""
    if isinstance(exc, PermissionError):
        return PathError(ErrorCode.PERMISSION_DENIED, path, "permission denied")
    return PathError(ErrorCode.IO_ERROR, path, exc.strerror or type(exc).__name__)
