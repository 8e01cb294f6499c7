"""Driving one run of the compiled graph to one of its four ends.

END (run_finished), interrupt (interrupt events, then run_finished with outcome interrupted),
cancel (run_cancelled; the last checkpoint is kept, and the answer the author saw streaming is
recorded in the conversation, marked as stopped) and error (run_failed; recorded on the
thread, and the part of the answer the author saw streaming before it is recorded too, marked
with the error, so it is still there when the thread is opened again; `run/retry` continues
from the last good checkpoint).

An interrupt is durable before anyone hears of it: its record, the run's end and the thread's
status are committed in one transaction, and only then is the event sent, by the caller and
once the thread is free (`RunEnd`), so an answer sent the instant the question arrives finds
the thread idle. A call that may have run before a crash (`CallUncertainError` from the tool
node) pauses the turn on the author's question about it (see `sidecar.runtime.recovery`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sidecar.host.spec import RequiredServerError
from sidecar.llm.types import PlannerError
from sidecar.protocol import (
    ErrorInfo,
    InterruptEvent,
    MessageEvent,
    RunCancelled,
    RunEventBody,
    RunFailed,
    RunFinished,
    RunStarted,
    disk_full_message,
)
from sidecar.runtime.emitter import RunEmitter
from sidecar.runtime.recovery import ask_uncertain
from sidecar.runtime.wire import graph_event, interrupt_from_payload, interrupt_info, message_info
from sidecar.store import Store
from sidecar.store.disk import full_disk_folder
from sidecar.store.records import MessageRecord
from sidecar.store.uncertain import CallUncertainError
from sidecar.turn.events import TokenStreamed, TurnEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended, not yet sent: the questions it asked (interrupt events, already
    committed) and its terminal event. The caller sends them once the thread is free again, so
    a client that reacts with a request (the answer, the instant the question arrives) never
    finds the thread busy."""

    final: RunEventBody
    questions: tuple[InterruptEvent, ...] = ()

    def events(self) -> tuple[RunEventBody, ...]:
        """The events to send, in order: the questions, then the terminal event."""
        return (*self.questions, self.final)


async def drive(
    graph: Any, saver: Any, store: Store, emit: RunEmitter, graph_input: Any, *, resumed: bool
) -> RunEnd:
    """Run the graph for one thread until it ends, pauses, fails or is cancelled.

    Returns how it ended, unsent (see `RunEnd`).
    """
    thread_id, run_id = emit.thread_id, emit.run_id
    config = {"configurable": {"thread_id": thread_id}}
    emit(RunStarted(resumed=resumed))
    try:
        async for _mode, chunk in graph.astream(graph_input, config, stream_mode=["custom"]):
            forward_event(emit, chunk)
        snapshot = await graph.aget_state(config)
    except asyncio.CancelledError:
        with store.transaction():
            stopped = _record_stopped_answer(store, emit)
            store.end_run(run_id, "cancelled")
            store.set_thread_status(thread_id, "cancelled")
        if stopped is not None:
            emit(MessageEvent(message=message_info(stopped)))
        return RunEnd(RunCancelled())
    except CallUncertainError as exc:
        return _await_decision(store, emit, exc.key)
    except PlannerError as exc:
        return RunEnd(_fail(store, emit, exc.code, str(exc), exc.details))
    except RequiredServerError as exc:
        return RunEnd(_fail(store, emit, "server_unavailable", str(exc)))
    except Exception as exc:  # the run boundary: any node failure is recorded, never lost
        folder = full_disk_folder(exc, store.db.path.parent)
        if folder is not None:
            return RunEnd(_disk_full(store, emit, folder))
        log.exception("run %s failed", run_id)
        return RunEnd(_fail(store, emit, "internal", f"{type(exc).__name__}: {exc}"))
    if snapshot.interrupts:
        events: list[InterruptEvent] = []
        with store.transaction():
            for pending in snapshot.interrupts:
                payload = dict(pending.value)
                store.raise_interrupt(pending.id, thread_id, run_id, payload["kind"], payload)
                info = interrupt_from_payload(pending.id, run_id, payload)
                events.append(InterruptEvent(interrupt=info))
            store.end_run(run_id, "interrupted")
            store.set_thread_status(thread_id, "interrupted")
        return RunEnd(RunFinished(outcome="interrupted"), tuple(events))
    # The turn is complete and its messages are in the store: its checkpoints hold nothing
    # that is still needed, so storage per turn stays flat.
    await saver.adelete_thread(thread_id)
    store.end_run(run_id, "finished")
    store.set_thread_status(thread_id, "idle")
    return RunEnd(RunFinished(outcome="completed"))


STOPPED_NOTE = "\n\n[stopped by the author before this answer was complete]"
"""Ends an answer a stop cut short, in the conversation: the model reads it next turn."""


FAILED_NOTE = "\n\n[this answer was cut off by an error: {error}]"
"""Ends an answer a failure cut short, in the conversation: the author sees it after a
restart, and the model reads it next turn."""


def _record_failed_answer(store: Store, emit: RunEmitter, error: str) -> MessageRecord | None:
    """Record the part of the answer the author saw stream before the failure (once per
    run), with the error it ended on."""
    text = emit.unrecorded_answer()
    if not text.strip():
        return None
    note = FAILED_NOTE.format(error=error)
    message_id = f"{emit.run_id}:failed"
    return store.add_message(emit.thread_id, "assistant", text + note, message_id=message_id)


def _record_stopped_answer(store: Store, emit: RunEmitter) -> MessageRecord | None:
    """Record the part of the answer the author saw stream before the stop (once per run)."""
    text = emit.unrecorded_answer()
    if not text.strip():
        return None
    return store.add_message(
        emit.thread_id, "assistant", text + STOPPED_NOTE, message_id=f"{emit.run_id}:stopped"
    )


def forward_event(emit: RunEmitter, event: TurnEvent) -> None:
    """A turn's event to the run's emitter: tokens straight to its stream, the rest as wire
    events (a malformed one is logged and dropped, never fatal to the run)."""
    if isinstance(event, TokenStreamed):
        emit.token(event.text)  # the hot path of a stream: coalesced by the emitter
        return
    try:
        body = graph_event(event)
    except ValidationError:
        log.exception("dropping a graph event the protocol refuses: %r", event)
        return
    if body is not None:
        emit(body)


def _await_decision(store: Store, emit: RunEmitter, key: str) -> RunEnd:
    """The turn waits on the author's decision about a call that may have run: the pending
    question about it (asked anew if none is pending), committed, ends the run."""
    intent = store.open_intent(key)
    if intent is None:
        return RunEnd(_fail(store, emit, "internal", f"call {key} is no longer open"))
    with store.transaction():
        question = store.pending_uncertain_question(key)
        if question is None:
            question = ask_uncertain(store, intent, emit.run_id, [])
        store.end_run(emit.run_id, "interrupted")
        store.set_thread_status(emit.thread_id, "interrupted")
    asked = tuple(
        InterruptEvent(interrupt=interrupt_info(record))
        for record in store.pending_interrupts(emit.thread_id)
        if record.id == question
    )
    return RunEnd(RunFinished(outcome="interrupted"), asked)


def _disk_full(store: Store, emit: RunEmitter, folder: Path) -> RunFailed:
    """A write of the turn found no room: the run fails with `disk_full` naming the folder.
    What the turn had committed stays (its checkpoint, its messages: `run/retry` goes on from
    there); recording its end may find no room either, and then the run is closed as a crash is,
    at the next start."""
    message = disk_full_message(str(folder))
    try:
        return _fail(store, emit, DISK_FULL_CODE, message)
    except Exception as exc:
        if full_disk_folder(exc, folder) is None:
            raise
        log.warning("run %s: %s (its end could not be recorded)", emit.run_id, message)
        return RunFailed(error=ErrorInfo(code=DISK_FULL_CODE, message=message))


DISK_FULL_CODE = "disk_full"


def _fail(
    store: Store, emit: RunEmitter, code: str, message: str, details: str | None = None
) -> RunFailed:
    with store.transaction():
        kept = _record_failed_answer(store, emit, message)
        store.end_run(emit.run_id, "failed", message)
        store.set_thread_status(emit.thread_id, "failed", message)
    if kept is not None:
        emit(MessageEvent(message=message_info(kept)))
    return RunFailed(error=ErrorInfo(code=code, message=message, details=details))
