"""`ThreadBudgetController`: `thread/budget` and `thread/set_budget` for the shown thread.

Never waits: each method sends one request and returns its `PendingRequest`. The budget is
loaded when a thread is shown, and again after the thread's `budget` and `turn_usage` events and
when one of its runs ends (its tasks' usage is recorded by then).
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from desktop.models.thread_budget import ThreadBudgetState
from sidecar.protocol import (
    TERMINAL_EVENT_TYPES,
    ErrorObject,
    RunEventParams,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadSetBudgetParams,
)

_RELOAD_ON = frozenset({"budget", "turn_usage", *TERMINAL_EVENT_TYPES})


class ThreadBudgetController:
    def __init__(self, api: SidecarApi, state: ThreadBudgetState | None = None) -> None:
        self._api = api
        self.state = state if state is not None else ThreadBudgetState()

    def show_thread(self, thread_id: str | None) -> PendingRequest[ThreadBudgetResult] | None:
        if thread_id != self.state.thread_id:
            self.state.select(thread_id)
        return self.reload()

    def reload(self) -> PendingRequest[ThreadBudgetResult] | None:
        thread_id = self.state.thread_id
        if thread_id is None:
            return None
        params = ThreadBudgetParams(thread_id=thread_id)
        return self._api.thread_budget(params).then(
            self._on_result, self._on_error(thread_id, "Loading the budget")
        )

    def set_budget(
        self, tokens: int | None, cost: float | None
    ) -> PendingRequest[ThreadBudgetResult] | None:
        """`thread/set_budget` for the shown thread (both None removes its budget)."""
        thread_id = self.state.thread_id
        if thread_id is None:
            return None
        params = ThreadSetBudgetParams(thread_id=thread_id, budget_tokens=tokens, budget_cost=cost)
        return self._api.thread_set_budget(params).then(
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
