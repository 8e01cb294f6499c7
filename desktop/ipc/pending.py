"""`PendingRequest`: the handle a request returns at once; the reply arrives later.

Pure Python (no Qt) so that fakes in tests can hand out and complete the same handles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, cast

from sidecar.protocol import ErrorObject, WireModel

ResultT = TypeVar("ResultT")
"""The result model a request completes with (`METHODS[method].result`)."""

ErrorCallback = Callable[[ErrorObject], None]


class PendingRequest(Generic[ResultT]):
    """A request on its way: completes once, with a typed result model or an `ErrorObject`.

    Callbacks registered with `then` run on completion (or at once if already complete), on the
    thread that completes the request, which is the GUI thread for `RpcClient`. The type
    parameter is the result model; `desktop.ipc.api` hands out handles typed with it.
    """

    def __init__(self, request_id: int, method: str) -> None:
        self.id = request_id
        self.method = method
        self.result: ResultT | None = None
        self.error: ErrorObject | None = None
        self._done = False
        self._on_result: list[Callable[[ResultT], None]] = []
        self._on_error: list[ErrorCallback] = []

    @property
    def done(self) -> bool:
        return self._done

    def then(
        self,
        on_result: Callable[[ResultT], None] | None = None,
        on_error: ErrorCallback | None = None,
    ) -> PendingRequest[ResultT]:
        """Register callbacks for the result and/or the error; returns self for chaining."""
        if self._done:
            self._fire(on_result, on_error)
            return self
        if on_result is not None:
            self._on_result.append(on_result)
        if on_error is not None:
            self._on_error.append(on_error)
        return self

    def resolve(self, result: ResultT) -> None:
        """Complete with a result; later completions are ignored."""
        if self._done:
            return
        self._done, self.result = True, result
        for callback in self._drain()[0]:
            callback(result)

    def reject(self, error: ErrorObject) -> None:
        """Complete with an error; later completions are ignored."""
        if self._done:
            return
        self._done, self.error = True, error
        for callback in self._drain()[1]:
            callback(error)

    def _drain(self) -> tuple[list[Callable[[ResultT], None]], list[ErrorCallback]]:
        callbacks = (self._on_result, self._on_error)
        self._on_result, self._on_error = [], []
        return callbacks

    def _fire(
        self, on_result: Callable[[ResultT], None] | None, on_error: ErrorCallback | None
    ) -> None:
        if self.error is not None:
            if on_error is not None:
                on_error(self.error)
        elif on_result is not None:
            on_result(cast(ResultT, self.result))  # done without an error: it has a result

    def __repr__(self) -> str:
        state = "error" if self.error else "done" if self._done else "pending"
        return f"<PendingRequest {self.id} {self.method} {state}>"


class RequestSender(Protocol):
    """What the app's controller needs from a client: `RpcClient` and test fakes provide it."""

    def request(self, method: str, params: WireModel | None = None) -> PendingRequest[Any]: ...
