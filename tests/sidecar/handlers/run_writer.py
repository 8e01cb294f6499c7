"""Writes a thread's runs into a real store the way the runtime's emitter does, for handler
tests of what the store gives back (memory events, summaries)."""

from __future__ import annotations

import itertools

from sidecar.protocol import MemoryEvent, MessageEvent, ToolResult, WireModel
from sidecar.runtime.wire import message_info
from sidecar.store import Store
from sidecar.store.records import StoredToolCall


class RunWriter:
    """Writes a run's messages and durable events the way the runtime's emitter does."""

    _ids = itertools.count(1)

    def __init__(self, store: Store, thread_id: str, *, question: str | None = None) -> None:
        self.store, self.thread_id = store, thread_id
        self.turn = f"turn{next(self._ids)}"
        if question is not None:
            store.add_message(thread_id, "user", question, message_id=f"{self.turn}:user")
        self.run_id = f"run-{self.turn}"
        store.create_run(self.run_id, thread_id, "start")
        self._seq = itertools.count()

    def event(self, body: WireModel, event_type: str) -> None:
        self.store.add_run_event(self.run_id, next(self._seq), event_type, body.model_dump_json())

    def message(self, role: str, text: str, message_id: str, **extra: object) -> str:
        record = self.store.add_message(
            self.thread_id,
            role,
            text,
            message_id=message_id,
            **extra,  # type: ignore[arg-type]
        )
        self.event(MessageEvent(message=message_info(record)), "message")
        return record.id

    def tool_call(self, call_id: str) -> None:
        call = StoredToolCall(id=call_id, server="memory", tool="search", arguments={})
        self.message("assistant", "", call_id, tool_calls=[call])
        self.event(ToolResult(call_id=call_id, is_error=False, content="ok"), "tool_result")
        self.message("tool", "ok", f"{call_id}:result", tool_call_id=call_id)

    def answer(self, text: str) -> str:
        return self.message("assistant", text, f"{self.turn}:answer")

    def memory(self, event: MemoryEvent) -> None:
        self.event(event, "memory")
