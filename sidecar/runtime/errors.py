"""Failures a caller of the runtime can act on; the RPC layer maps each to an error code."""

from __future__ import annotations


class RuntimeRequestError(Exception):
    """Base: the request cannot be carried out in the thread's current state."""


class ThreadBusyError(RuntimeRequestError):
    """The thread already has a running turn."""


class NoSuchInterruptError(RuntimeRequestError):
    """No pending interrupt of this thread has that id."""


class InvalidResumeValueError(RuntimeRequestError):
    """The resume value does not fit the interrupt's kind."""


class NothingToResumeError(RuntimeRequestError):
    """The thread has no unfinished turn to continue."""
