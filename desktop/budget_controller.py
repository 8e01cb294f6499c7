"""`ThreadBudgetController`: `thread/budget` and `thread/set_budget` for the shown thread.

Never waits: each method sends one request and returns its `PendingRequest`. The budget is
loaded when a thread is shown, and again after the thread's `budget` and `turn_usage` events and
when one of its runs ends (its tasks' usage is recorded by then).
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.ipc.pending import PendingRequest, RequestSender
from desktop.models.thread_budget import ThreadBudgetState
from sidecar.protocol import TERMINAL_EVENT_TYPES, ErrorObject, RunEventParams
from sidecar.protocol.budgets import (
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadSetBudgetParams,
)

_RELOAD_ON = frozenset({"budget", "turn_usage", *TERMINAL_EVENT_TYPES})


class ThreadBudgetController:
    def __init__(self, sender: RequestSender, state: ThreadBudgetState | None = None) -> None:
        self._sender = sender
        self.state = state if state is not None else ThreadBudgetState()

    def show_thread(self, thread_id: str | None) -> PendingRequest | None:
        if thread_id != self.state.thread_id:
            self.state.select(thread_id)
        return self.reload()

    def reload(self) -> PendingRequest | None:
        thread_id = self.state.thread_id
        if thread_id is None:
            return None
        params = ThreadBudgetParams(thread_id=thread_id)
        return self._sender.request("thread/budget", params).then(
            self._on_result, self._on_error(thread_id, "Loading the budget")
        )

    def set_budget(self, tokens: int | None, cost: float | None) -> PendingRequest | None:
        """`thread/set_budget` for the shown thread (both None removes its budget)."""
        thread_id = self.state.thread_id
        if thread_id is None:
            return None
        params = ThreadSetBudgetParams(thread_id=thread_id, budget_tokens=tokens, budget_cost=cost)
        return self._sender.request("thread/set_budget", params).then(
            self._on_result, self._on_error(thread_id, "Setting the budget")
        )

    def handle_run_event(self, params: RunEventParams) -> None:
        if params.thread_id == self.state.thread_id and params.event.type in _RELOAD_ON:
            self.reload()

    def _on_result(self, result: ThreadBudgetResult) -> None:
        self.state.load(result)

    def _on_error(self, thread_id: str, what: str) -> Callable[[ErrorObject], None]:
        def on_error(error: ErrorObject) -> None:
            self.state.fail(thread_id, f"{what} failed: {error.message}")

        return on_error
