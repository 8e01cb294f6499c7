"""Live interrupts: an MCP server asks the author something while a tool call is in flight.

Elicitation and sampling requests arrive on a server's session during one of its tool calls,
deep inside the graph's tool node, so they cannot be LangGraph interrupts. Instead the run that
owns the call (found through `sidecar.binding.calls`) raises a live interrupt:

1. it is recorded in the store as a pending interrupt (so `thread/get` lists it) and sent as an
   `interrupt` run event, with `live: true`, while the run keeps running;
2. the server's request waits on a future (the call's idle limit paused meanwhile);
3. `run/resume` with its id resolves the future even though the thread is busy
   (`RunManager.resume` asks here first), after checking the value against the interrupt's kind
   and its own check (e.g. the form's schema);
4. if the call ends first (finished, timed out, run cancelled), the interrupt is dropped and
   the server gets a cancel/refusal. A run nobody may answer (an unattended run that skips,
   `sidecar.runtime.unattended`) refuses it the same way before it is recorded (`AskHook`).
   If the sidecar dies, the call dies with it; on restart `sidecar.runtime.recovery` folds the
   question into the new question about the call (a write that may have run) or names it in
   the thread's error (a read-only call asks again on retry).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sidecar.binding.calls import (
    AnswerCheck,
    InFlightCall,
    InFlightCalls,
    LiveInterruptDropped,
    RunBinding,
    current_task,
)
from sidecar.protocol import InterruptClosed, InterruptEvent
from sidecar.runtime.emitter import RunEmitter
from sidecar.runtime.errors import InvalidResumeValueError, NoSuchInterruptError
from sidecar.runtime.interrupts import checked_value
from sidecar.runtime.wire import interrupt_from_payload
from sidecar.store import Store

AskHook = Callable[[str, str, str, str], bool]
"""(thread id, run id, interrupt id, kind) of a live question about to be asked; False: nobody
may be asked, the question is dropped unasked (its server gets the refusal)."""


def _always_ask(thread_id: str, run_id: str, interrupt_id: str, kind: str) -> bool:
    del thread_id, run_id, interrupt_id, kind
    return True


@dataclass(eq=False)
class _Pending:
    thread_id: str
    run_id: str
    kind: str
    future: asyncio.Future[dict[str, Any]]
    check: AnswerCheck | None


class LiveInterrupts:
    """The pending live interrupts of every running turn, by interrupt id."""

    def __init__(self, store: Store, calls: InFlightCalls) -> None:
        self._store = store
        self._calls = calls
        self._pending: dict[str, _Pending] = {}
        self._may_ask: AskHook = _always_ask

    def set_ask_hook(self, hook: AskHook) -> None:
        """Asked before each live question is recorded (see `AskHook`)."""
        self._may_ask = hook

    def binding(self, emit: RunEmitter) -> RunBinding:
        """The host's view of one run: bind it to the run's task with `bind_run`."""

        async def ask(
            call: InFlightCall | None, payload: Mapping[str, object], check: AnswerCheck | None
        ) -> dict[str, Any]:
            return await self._ask(emit, call, payload, check)

        return RunBinding(emit.thread_id, emit.run_id, self._calls, ask)

    def owns(self, interrupt_id: str) -> bool:
        return interrupt_id in self._pending

    def pending_ids(self, run_id: str | None = None) -> list[str]:
        return [i for i, p in self._pending.items() if run_id is None or p.run_id == run_id]

    def resolve(self, thread_id: str, interrupt_id: str, value: dict[str, Any]) -> str:
        """Answer a live interrupt; returns the id of the (still running) run that asked.

        Raises:
            NoSuchInterruptError: not a pending live interrupt of this thread.
            InvalidResumeValueError: the value does not fit the interrupt.
        """
        pending = self._pending.get(interrupt_id)
        if pending is None or pending.thread_id != thread_id or pending.future.done():
            raise NoSuchInterruptError(interrupt_id)
        checked = checked_value(pending.kind, value)
        problem = pending.check(checked) if pending.check is not None else None
        if problem is not None:
            raise InvalidResumeValueError(problem)
        self._store.answer_interrupt(interrupt_id, checked)
        pending.future.set_result(checked)
        return pending.run_id

    def end_run(self, run_id: str) -> None:
        """The run is over: whatever it still waits on is dropped."""
        for pending in self._pending.values():
            if pending.run_id == run_id and not pending.future.done():
                pending.future.cancel()

    async def _ask(
        self,
        emit: RunEmitter,
        call: InFlightCall | None,
        payload: Mapping[str, object],
        check: AnswerCheck | None,
    ) -> dict[str, Any]:
        """Without `call` (a subagent's own question) it waits until answered or the run ends."""
        interrupt_id = uuid.uuid4().hex
        body: dict[str, Any] = {**payload, "live": True}
        if call is not None:
            body["call_id"] = call.call_id
        task_id = call.task_id if call is not None and call.task_id else current_task()
        if task_id is not None and "task_id" not in body:
            body["task_id"] = task_id
        info = interrupt_from_payload(interrupt_id, emit.run_id, body)
        if not self._may_ask(emit.thread_id, emit.run_id, interrupt_id, info.kind):
            raise LiveInterruptDropped(interrupt_id)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending = _Pending(emit.thread_id, emit.run_id, info.kind, future, check)
        self._pending[interrupt_id] = pending
        self._store.save_interrupt(interrupt_id, emit.thread_id, emit.run_id, info.kind, body)
        emit(InterruptEvent(interrupt=info))
        call_over = asyncio.ensure_future(
            call.done.wait() if call is not None else asyncio.Event().wait()
        )
        try:
            await asyncio.wait({future, call_over}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            call_over.cancel()
            del self._pending[interrupt_id]
            if not future.done():
                future.cancel()
            if future.cancelled():
                self._drop_one(interrupt_id)
                emit(InterruptClosed(interrupt_id=interrupt_id))
        if future.cancelled():
            raise LiveInterruptDropped(interrupt_id)
        return future.result()

    def _drop_one(self, interrupt_id: str) -> None:
        """Mark one unanswered live interrupt dropped (its call or run ended first)."""
        self._store.drop_interrupt(interrupt_id)
