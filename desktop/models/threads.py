"""The thread list and each thread's run status, as plain Python state."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.models.emitter import Emitter
from sidecar.protocol import ThreadInfo, ThreadStatus


def channel_sort_key(name: str) -> tuple[str, str]:
    """Channels sort by name, ignoring case (ties broken by the exact name)."""
    return (name.casefold(), name)


class ThreadsState:
    """All threads, newest first, as the sidecar last described them.

    Events: `reset()` after structural changes (list replaced, thread added or removed),
    `updated(row)` when one thread's fields changed in place.
    """

    def __init__(self) -> None:
        self._threads: list[ThreadInfo] = []
        self.reset: Emitter[[]] = Emitter()
        self.updated: Emitter[[int]] = Emitter()

    @property
    def threads(self) -> tuple[ThreadInfo, ...]:
        return tuple(self._threads)

    def __len__(self) -> int:
        return len(self._threads)

    def at(self, row: int) -> ThreadInfo:
        """The thread at `row` (newest first), without copying the list."""
        return self._threads[row]

    def channels(self) -> list[str]:
        """The channels threads are filed under, sorted by name."""
        return sorted({t.channel for t in self._threads if t.channel}, key=channel_sort_key)

    def row_of(self, thread_id: str) -> int | None:
        for row, thread in enumerate(self._threads):
            if thread.id == thread_id:
                return row
        return None

    def get(self, thread_id: str) -> ThreadInfo | None:
        row = self.row_of(thread_id)
        return None if row is None else self._threads[row]

    def set_all(self, threads: tuple[ThreadInfo, ...] | list[ThreadInfo]) -> None:
        self._threads = list(threads)
        self.reset.emit()

    def upsert(self, thread: ThreadInfo) -> None:
        """Replace the thread with the same id, or add it at the top."""
        row = self.row_of(thread.id)
        if row is None:
            self._threads.insert(0, thread)
            self.reset.emit()
        elif self._threads[row] != thread:
            self._threads[row] = thread
            self.updated.emit(row)

    def remove(self, thread_id: str) -> None:
        row = self.row_of(thread_id)
        if row is not None:
            del self._threads[row]
            self.reset.emit()

    def set_channel(self, thread_id: str, channel: str | None) -> None:
        """File the thread under `channel` (None: under none), as the sidecar confirmed."""
        thread = self.get(thread_id)
        if thread is not None and thread.channel != channel:
            self.upsert(thread.model_copy(update={"channel": channel}))

    def set_status(self, thread_id: str, status: ThreadStatus) -> None:
        thread = self.get(thread_id)
        if thread is not None and thread.status != status:
            self.upsert(thread.model_copy(update={"status": status}))


@dataclass(frozen=True)
class RunState:
    """Where a thread's current (or last) turn stands, for the status line.

    `status` follows the protocol's `ThreadStatus`; `node` is the graph node running now;
    `error` is the failure message of a failed turn and `error_details` the underlying text.
    """

    status: ThreadStatus = "idle"
    run_id: str | None = None
    node: str | None = None
    error: str | None = None
    error_details: str | None = None

    @property
    def is_running(self) -> bool:
        return self.status == "running"

    @property
    def can_retry(self) -> bool:
        return self.status in ("failed", "cancelled")


NODE_WORDS = {
    "context": "Getting ready…",
    "planner": "Thinking…",
    "tool": "Using a tool…",
    "dispatch": "Starting the plan…",
    "interrupt": "Asking you…",
    "persist": "Saving the answer…",
}
"""What the agent is doing, in the author's words, by the step (graph node) it is in."""


def describe_run(state: RunState, waiting: int = 0) -> str:
    """The status line text for a thread's run state and its number of pending interrupts
    (what the agent is doing in the author's words, never the name of its step)."""
    if state.status == "running":
        return NODE_WORDS.get(state.node or "", "Working…")
    if waiting > 1:
        return f"Waiting for {waiting} decisions"
    if state.status == "interrupted" or waiting:
        return "Waiting for your decision"
    if state.status == "failed":
        return f"Failed: {state.error}" if state.error else "Failed"
    if state.status == "cancelled":
        return "Cancelled"
    return "Ready"
