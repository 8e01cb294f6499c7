"""Exceptions a controller raises for misuse; run failures are results, never exceptions."""

from __future__ import annotations

from typing import ClassVar


class ControllerError(Exception):
    """Base of every controller exception."""


class ControllerNotOpenError(ControllerError):
    """The controller was used outside `async with controller:`."""


class RunInProgressError(ControllerError):
    """`start`/`resume` was called while a run is still active."""


class NoRunError(ControllerError):
    """`stream`/`wait`/`interrupt` was called before any run was started, or `send_message`
    while no run is going (none started, or it ended)."""


class UnknownPermissionRequestError(ControllerError, KeyError):
    """The permission request id is not pending (never asked, already answered or cancelled)."""


class InvalidDecisionError(ControllerError, ValueError):
    """The decision does not fit the request (e.g. answers for a plain tool request)."""


class InputUnsupportedError(ControllerError):
    """The CLI takes no input once a run has started (`send_message`); the caller may cancel
    the run and run it again with the message added to the instruction."""

    code: ClassVar[str] = "input_unsupported"

    def __init__(self, cli: str) -> None:
        super().__init__(
            f"{cli} cannot take input mid-run: cancel the run and run it again with the "
            "message added to its instruction"
        )
        self.cli = cli
