"""Pending interrupts across all threads: the inbox behind the dialogs."""

from __future__ import annotations

from collections.abc import Collection

from desktop.models.emitter import Emitter
from sidecar.protocol import InterruptInfo


class InterruptInbox:
    """Interrupts waiting for the author, per thread, in arrival order.

    Events: `added(thread_id, interrupt)` for each new interrupt (known ids are not re-added),
    `removed(thread_id, interrupt_id)`, and `changed()` after any change.
    """

    def __init__(self) -> None:
        self._pending: dict[str, dict[str, InterruptInfo]] = {}
        self.added: Emitter[[str, InterruptInfo]] = Emitter()
        self.removed: Emitter[[str, str]] = Emitter()
        self.changed: Emitter[[]] = Emitter()

    def __len__(self) -> int:
        return sum(len(items) for items in self._pending.values())

    def pending(self, thread_id: str | None = None) -> list[tuple[str, InterruptInfo]]:
        """(thread_id, interrupt) pairs, for one thread or for all."""
        return [
            (tid, interrupt)
            for tid, items in self._pending.items()
            if thread_id is None or tid == thread_id
            for interrupt in items.values()
        ]

    def count(self, thread_id: str) -> int:
        return len(self._pending.get(thread_id, {}))

    def get(self, interrupt_id: str) -> tuple[str, InterruptInfo] | None:
        for thread_id, items in self._pending.items():
            if interrupt_id in items:
                return thread_id, items[interrupt_id]
        return None

    def add(self, thread_id: str, interrupt: InterruptInfo) -> None:
        items = self._pending.setdefault(thread_id, {})
        if interrupt.id in items:
            items[interrupt.id] = interrupt
            return
        items[interrupt.id] = interrupt
        self.added.emit(thread_id, interrupt)
        self.changed.emit()

    def replace_thread(self, thread_id: str, interrupts: tuple[InterruptInfo, ...]) -> None:
        """Make the thread's pending set exactly `interrupts` (the sidecar's word on it)."""
        keep = {interrupt.id for interrupt in interrupts}
        for interrupt_id in list(self._pending.get(thread_id, {})):
            if interrupt_id not in keep:
                self.remove(thread_id, interrupt_id)
        for interrupt in interrupts:
            self.add(thread_id, interrupt)

    def remove(self, thread_id: str, interrupt_id: str) -> None:
        items = self._pending.get(thread_id, {})
        if items.pop(interrupt_id, None) is None:
            return
        if not items:
            self._pending.pop(thread_id, None)
        self.removed.emit(thread_id, interrupt_id)
        self.changed.emit()

    def drop_run(self, thread_id: str, run_id: str) -> None:
        """Drop the interrupts one run of the thread asked."""
        for interrupt_id, interrupt in list(self._pending.get(thread_id, {}).items()):
            if interrupt.run_id == run_id:
                self.remove(thread_id, interrupt_id)

    def drop_thread(self, thread_id: str, *, keep_runs: Collection[str] = ()) -> None:
        """Drop the thread's interrupts, but those asked by the runs in `keep_runs` (plans
        working in the background, whose questions outlive the thread's turns)."""
        for interrupt_id, interrupt in list(self._pending.get(thread_id, {}).items()):
            if interrupt.run_id not in keep_runs:
                self.remove(thread_id, interrupt_id)
