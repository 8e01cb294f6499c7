from __future__ import annotations

from desktop.ipc.pending import PendingRequest
from sidecar.protocol import Empty, ErrorObject


def test_callbacks_registered_before_completion_run_once_on_resolve():
    pending = PendingRequest(1, "ping")
    results: list[object] = []
    pending.then(results.append, lambda error: results.append(("error", error)))
    pending.resolve(Empty())
    pending.resolve(Empty())
    pending.reject(ErrorObject(code=1, message="late"))
    assert results == [Empty()]
    assert pending.done and pending.error is None


def test_callbacks_registered_after_completion_run_at_once():
    pending = PendingRequest(1, "ping")
    error = ErrorObject(code=-32001, message="gone")
    pending.reject(error)
    seen: list[ErrorObject] = []
    pending.then(None, seen.append)
    pending.then(lambda _result: seen.append(ErrorObject(code=0, message="wrong")))
    assert seen == [error]
