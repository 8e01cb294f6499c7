"""`IdleDeadline`: a tool call's timeout that progress keeps alive, under a hard cap.

A long tool that reports progress should never be killed by a fixed timeout, and a silent one
should not hang for ever. So a call gets two limits: an idle timeout, pushed back by every
progress notification (and suspended while the server waits on the author), and a hard cap
from the start of the call that nothing moves.

    with IdleDeadline(idle_s=60, hard_s=3600) as deadline:
        await client.call_tool(name, args, progress_callback=deadline.progress_sink(on_progress))

Raises `CallTimeoutError` (kind `idle` or `hard`) when a limit passes; the SDK sends the server
`notifications/cancelled` for the abandoned request as the call's task is cancelled.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from contextlib import contextmanager
from types import TracebackType
from typing import Literal, Protocol

import anyio

from sidecar.binding.calls import current_call

TimeoutKind = Literal["idle", "hard"]


class ProgressSink(Protocol):
    """Receives a running call's progress notifications."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


class CallTimeoutError(TimeoutError):
    """The call went quiet for longer than its idle timeout, or ran past its hard cap."""

    def __init__(self, kind: TimeoutKind, seconds: float) -> None:
        what = "no progress" if kind == "idle" else "the call's limit"
        super().__init__(f"timed out: {what} after {seconds:g} s")
        self.kind: TimeoutKind = kind
        self.seconds = seconds


class IdleDeadline:
    """A cancel scope whose deadline is `min(last activity + idle_s, start + hard_s)`.

    Enter and leave it in the task that makes the call. `None` disables a limit. While the
    block runs inside the tool node's `in_flight(...)`, the deadline attaches itself to that
    call, so a server request waiting on the author (elicitation, sampling) pauses the idle
    limit for as long as it waits.
    """

    def __init__(self, idle_s: float | None, hard_s: float | None) -> None:
        self.idle_s = idle_s
        self.hard_s = hard_s
        self._scope = anyio.CancelScope()
        self._hard_at = math.inf
        self._pauses = 0

    def __enter__(self) -> IdleDeadline:
        now = anyio.current_time()
        self._hard_at = now + self.hard_s if self.hard_s is not None else math.inf
        self._scope.__enter__()
        self.touch()
        call = current_call()
        if call is not None:
            call.deadline = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        call = current_call()
        if call is not None and call.deadline is self:
            call.deadline = None
        swallowed = bool(self._scope.__exit__(exc_type, exc, tb))
        if self._scope.cancelled_caught:
            raise self._timeout()
        return swallowed

    def touch(self) -> None:
        """Activity: the idle limit starts again from now (never past the hard cap)."""
        if self._pauses:
            return
        idle_at = anyio.current_time() + self.idle_s if self.idle_s is not None else math.inf
        self._scope.deadline = min(idle_at, self._hard_at)

    @contextmanager
    def paused(self) -> Generator[None]:
        """Suspend the idle limit (the hard cap still applies), e.g. while the author answers."""
        self._pauses += 1
        self._scope.deadline = self._hard_at
        try:
            yield
        finally:
            self._pauses -= 1
            self.touch()

    def progress_sink(self, sink: ProgressSink | None = None) -> ProgressSink:
        """A progress callback that counts as activity, then forwards to `sink`."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.touch()
            if sink is not None:
                await sink(progress, total, message)

        return on_progress

    def _timeout(self) -> CallTimeoutError:
        if anyio.current_time() >= self._hard_at:
            return CallTimeoutError("hard", self.hard_s or 0.0)
        return CallTimeoutError("idle", self.idle_s or 0.0)
