"""Runtime and store failures → typed RPC errors."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from sidecar.keychain import KeyringUnavailableError
from sidecar.protocol import ErrorCode, RpcError
from sidecar.runtime.errors import (
    InvalidResumeValueError,
    NoSuchInterruptError,
    NothingToResumeError,
    ThreadBusyError,
)
from sidecar.store import ThreadNotFoundError

_CODES: list[tuple[type[Exception], ErrorCode]] = [
    (ThreadNotFoundError, ErrorCode.THREAD_NOT_FOUND),
    (ThreadBusyError, ErrorCode.THREAD_BUSY),
    (NoSuchInterruptError, ErrorCode.NO_SUCH_INTERRUPT),
    (InvalidResumeValueError, ErrorCode.INVALID_RESUME_VALUE),
    (NothingToResumeError, ErrorCode.NOTHING_TO_RESUME),
    (KeyringUnavailableError, ErrorCode.KEYRING_UNAVAILABLE),
]


@contextmanager
def typed_errors() -> Generator[None]:
    """Re-raise known failures as `RpcError` with their application code."""
    try:
        yield
    except tuple(exc for exc, _ in _CODES) as exc:
        code = next(code for kind, code in _CODES if isinstance(exc, kind))
        raise RpcError(code, _describe(code, exc)) from exc


def _describe(code: ErrorCode, exc: Exception) -> str:
    messages = {
        ErrorCode.THREAD_NOT_FOUND: "thread not found",
        ErrorCode.THREAD_BUSY: "the thread already has a running turn",
        ErrorCode.NO_SUCH_INTERRUPT: "no pending interrupt with that id",
        ErrorCode.NOTHING_TO_RESUME: "the thread has no unfinished turn",
    }
    base = messages.get(code)
    return f"{base}: {exc}" if base else str(exc)
