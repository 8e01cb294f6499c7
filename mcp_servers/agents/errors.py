"""Exceptions a controller raises for misuse; run failures are results, never exceptions."""

from __future__ import annotations


class ControllerError(Exception):
    """Base of every controller exception."""


class ControllerNotOpenError(ControllerError):
    """The controller was used outside `async with controller:`."""


class RunInProgressError(ControllerError):
    """`start`/`resume` was called while a run is still active."""


class NoRunError(ControllerError):
    """`stream`/`wait`/`interrupt` was called before any run was started."""


class UnknownPermissionRequestError(ControllerError, KeyError):
    """The permission request id is not pending (never asked, already answered or cancelled)."""


class InvalidDecisionError(ControllerError, ValueError):
    """The decision does not fit the request (e.g. answers for a plain tool request)."""
