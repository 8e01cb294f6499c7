"""Typed memory refusals with stable codes (tool results read ``[<code>] <message>``)."""

from __future__ import annotations

from enum import StrEnum


class MemoryErrorCode(StrEnum):
    UNKNOWN_TIER = "unknown_tier"
    EMPTY_TEXT = "empty_text"
    TOO_LONG = "too_long"
    NOT_FOUND = "not_found"
    FORGED_SOURCE = "forged_source"
    NO_SCOPE = "no_scope"
    INVALID_ARGUMENTS = "invalid_arguments"


class MemoryRefusal(Exception):
    """A refused memory operation, with a stable ``code``."""

    def __init__(self, code: MemoryErrorCode, message: str) -> None:
        super().__init__(f"[{code.value}] {message}")
        self.code = code
        self.message = message
