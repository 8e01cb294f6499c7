"""The review gate's errors and the deadline every blocking step of it runs under."""

from __future__ import annotations

import time


class ReviewError(Exception):
    """The review gate cannot do what was asked; the message says why."""


class ReviewTimeoutError(ReviewError):
    """A step ran past its deadline (a huge workspace, a hung git)."""


class Deadline:
    """A point in time (monotonic clock) that long loops check between files, and subprocess
    calls turn into their own timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """Seconds left; raises once none are.

        Raises:
            ReviewTimeoutError: the deadline has passed.
        """
        left = self._end - time.monotonic()
        if left <= 0:
            raise ReviewTimeoutError(f"took longer than {self.seconds:g}s")
        return left

    def check(self) -> None:
        """Raises:
        ReviewTimeoutError: the deadline has passed."""
        self.remaining()
