"""Driving one run of the compiled graph to one of its four ends.

END (run_finished), interrupt (interrupt events, then run_finished with outcome interrupted),
cancel (run_cancelled; the last checkpoint is kept) and error (run_failed; recorded on the
thread; `run/retry` continues from the last good checkpoint).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import ValidationError

from sidecar.host.spec import RequiredServerError
from sidecar.llm.types import PlannerError
from sidecar.protocol import (
    ErrorInfo,
    InterruptEvent,
    RunCancelled,
    RunEventBody,
    RunFailed,
    RunFinished,
    RunStarted,
)
from sidecar.runtime.emitter import RunEmitter
from sidecar.runtime.wire import graph_event, interrupt_from_payload
from sidecar.store import Store

log = logging.getLogger(__name__)


async def drive(
    graph: Any, saver: Any, store: Store, emit: RunEmitter, graph_input: Any, *, resumed: bool
) -> RunEventBody:
    """Run the graph for one thread until it ends, pauses, fails or is cancelled.

    Returns the terminal event unsent: the caller sends it once the thread is free again, so a
    client that reacts to it with a new request never finds the thread busy.
    """
    thread_id, run_id = emit.thread_id, emit.run_id
    config = {"configurable": {"thread_id": thread_id}}
    emit(RunStarted(resumed=resumed))
    try:
        async for _mode, chunk in graph.astream(graph_input, config, stream_mode=["custom"]):
            _forward(emit, chunk)
        snapshot = await graph.aget_state(config)
    except asyncio.CancelledError:
        store.end_run(run_id, "cancelled")
        store.set_thread_status(thread_id, "cancelled")
        return RunCancelled()
    except PlannerError as exc:
        return _fail(store, emit, exc.code, str(exc), exc.details)
    except RequiredServerError as exc:
        return _fail(store, emit, "server_unavailable", str(exc))
    except Exception as exc:  # the run boundary: any node failure is recorded, never lost
        log.exception("run %s failed", run_id)
        return _fail(store, emit, "internal", f"{type(exc).__name__}: {exc}")
    if snapshot.interrupts:
        for pending in snapshot.interrupts:
            payload = dict(pending.value)
            store.save_interrupt(pending.id, thread_id, run_id, payload["kind"], payload)
            emit(InterruptEvent(interrupt=interrupt_from_payload(pending.id, run_id, payload)))
        store.end_run(run_id, "interrupted")
        store.set_thread_status(thread_id, "interrupted")
        return RunFinished(outcome="interrupted")
    # The turn is complete and its messages are in the store: its checkpoints hold nothing
    # that is still needed, so storage per turn stays flat.
    await saver.adelete_thread(thread_id)
    store.end_run(run_id, "finished")
    store.set_thread_status(thread_id, "idle")
    return RunFinished(outcome="completed")


_INTERNAL_CHUNKS = frozenset({"usage"})


def _forward(emit: RunEmitter, chunk: Any) -> None:
    if chunk.get("type") in _INTERNAL_CHUNKS:
        return
    try:
        emit(graph_event(chunk))
    except ValidationError:
        log.exception("dropping a malformed graph event: %r", chunk)


def _fail(
    store: Store, emit: RunEmitter, code: str, message: str, details: str | None = None
) -> RunFailed:
    store.end_run(emit.run_id, "failed", message)
    store.set_thread_status(emit.thread_id, "failed", message)
    return RunFailed(error=ErrorInfo(code=code, message=message, details=details))
