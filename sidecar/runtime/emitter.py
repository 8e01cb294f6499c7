"""Numbering, persisting and publishing one run's events."""

from __future__ import annotations

from collections.abc import Callable

from sidecar.protocol import RunEventBody, RunEventParams
from sidecar.store import Store

EventSink = Callable[[RunEventParams], None]

# Token events are the stream of the answer, which persist writes whole; storing each token
# would make a turn's storage grow with its length for nothing.
# A subagent's own events are in its sub-thread's conversation already.
_EPHEMERAL = frozenset({"token", "tool_progress", "subagent_event"})


class RunEmitter:
    def __init__(self, store: Store, sink: EventSink, run_id: str, thread_id: str) -> None:
        self._store = store
        self._sink = sink
        self.run_id = run_id
        self.thread_id = thread_id
        self._seq = 0

    def __call__(self, event: RunEventBody) -> None:
        params = RunEventParams(
            run_id=self.run_id, thread_id=self.thread_id, seq=self._seq, event=event
        )
        self._seq += 1
        if event.type not in _EPHEMERAL:
            self._store.add_run_event(self.run_id, params.seq, event.type, event.model_dump_json())
        self._sink(params)
