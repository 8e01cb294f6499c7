"""What the Memory panel shows: the memories of a tier, each turn's context report ("what the
agent saw") and the memories saved or forgotten during turns. Plain Python, no Qt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from desktop.models.emitter import Emitter
from sidecar.protocol import (
    ContextEvent,
    IdentityFileInfo,
    MemoryChangeInfo,
    MemoryEvent,
    MemoryInfo,
    MemoryProvenance,
    MemorySnapshot,
    TurnUsageEvent,
)

MAX_REPORTS = 200

PROVENANCE_LABELS: dict[MemoryProvenance, str] = {
    "author": "you",
    "agent_from_author": "agent, from your words",
    "agent_after_untrusted": "agent, after untrusted content",
}
NOT_REVIEWED = "not reviewed"


def describe_provenance(memory: MemoryInfo) -> str:
    """Who wrote a memory and from what, and whether the author has reviewed what the agent
    saved: "agent, after untrusted content · not reviewed"."""
    label = PROVENANCE_LABELS[memory.provenance]
    return f"{label} · {NOT_REVIEWED}" if memory.unreviewed else label


def _snapshot_lines(side: MemorySnapshot) -> list[str]:
    pinned = ", pinned" if side.pinned else ""
    return [f"{side.tier}{pinned}, by {PROVENANCE_LABELS[side.provenance]}:", side.text]


def describe_memory_change(change: MemoryChangeInfo) -> tuple[str, str]:
    """(before, after) of a memory change the author is asked about, as plain text: tier, pin,
    who wrote it, and the text; "(no memory)" for a side that does not exist."""
    before = "\n".join(_snapshot_lines(change.before)) if change.before else "(no memory)"
    after = "\n".join(_snapshot_lines(change.after)) if change.after else "(forgotten)"
    return before, after


@dataclass(frozen=True, slots=True)
class TurnReport:
    """One turn's context report and the memory changes of that turn (the transcript chips)."""

    run_id: str
    context: ContextEvent
    changes: tuple[MemoryEvent, ...] = ()
    usage: TurnUsageEvent | None = None


def describe_change(event: MemoryEvent) -> str:
    """A chip's text: "Saved (account): The editor is Zofia." or why it failed."""
    if event.error:
        return f"Not saved: {event.error}"
    memory = event.memory
    text = memory.text if memory is not None else event.key
    tier = f" ({memory.tier})" if memory is not None else ""
    return f"{event.action.capitalize()}{tier}: {text}"


def describe_usage(usage: TurnUsageEvent) -> str:
    """Tokens and cost of the turn and of the thread so far."""

    def cost(value: float | None) -> str:
        return "cost unknown" if value is None else f"${value:.4f}"

    return (
        f"Tokens: {usage.prompt_tokens} in, {usage.completion_tokens} out, {cost(usage.cost)}; "
        f"thread: {usage.thread_prompt_tokens} in, {usage.thread_completion_tokens} out, "
        f"{cost(usage.thread_cost)}"
    )


def describe_context(report: ContextEvent) -> list[str]:
    """Lines of a context chip's detail: each part, in or out, with tokens and why."""
    lines = [
        f"{report.used} of {report.budget} tokens (window {report.window}, {report.tokenizer})"
    ]
    if report.tools_sent:
        deferred = f", {report.tools_deferred} deferred (found with tool search)"
        lines.append(f"Tools: {report.tools_sent} sent{deferred if report.tools_deferred else ''}")
    for item in report.items:
        mark = "in " if item.included else "out"
        lines.append(f"[{mark}] {item.kind}: {item.label} — {item.tokens} tokens, {item.reason}")
    if report.compaction is not None:
        done = "compacted" if report.compaction.performed else "not compacted"
        lines.append(f"Compaction: {done} — {report.compaction.reason}")
    lines += [f"Warning: {w}" for w in report.warnings]
    return lines


@dataclass
class MemoryState:
    """Events: `memories_changed()`, `reports_changed(thread_id)`, `identity_changed()`."""

    memories: tuple[MemoryInfo, ...] = ()
    identity: tuple[IdentityFileInfo, ...] = ()
    workspace: str = ""
    reports: dict[str, list[TurnReport]] = field(default_factory=dict)
    memories_changed: Emitter[[]] = field(default_factory=Emitter)
    reports_changed: Emitter[[str]] = field(default_factory=Emitter)
    identity_changed: Emitter[[]] = field(default_factory=Emitter)

    def set_memories(self, memories: tuple[MemoryInfo, ...]) -> None:
        self.memories = memories
        self.memories_changed.emit()

    def set_identity(self, workspace: str, files: tuple[IdentityFileInfo, ...]) -> None:
        self.workspace, self.identity = workspace, files
        self.identity_changed.emit()

    def add_context(self, thread_id: str, run_id: str, event: ContextEvent) -> None:
        reports = self.reports.setdefault(thread_id, [])
        reports.append(TurnReport(run_id, event))
        del reports[:-MAX_REPORTS]
        self.reports_changed.emit(thread_id)

    def add_change(self, thread_id: str, run_id: str, event: MemoryEvent) -> None:
        self._update(thread_id, run_id, lambda old: replace(old, changes=(*old.changes, event)))

    def add_usage(self, thread_id: str, run_id: str, event: TurnUsageEvent) -> None:
        self._update(thread_id, run_id, lambda old: replace(old, usage=event))

    def _update(
        self, thread_id: str, run_id: str, change: Callable[[TurnReport], TurnReport]
    ) -> None:
        reports = self.reports.setdefault(thread_id, [])
        for i in range(len(reports) - 1, -1, -1):
            if reports[i].run_id == run_id:
                reports[i] = change(reports[i])
                break
        self.reports_changed.emit(thread_id)

    def turn_reports(self, thread_id: str | None) -> list[TurnReport]:
        return list(self.reports.get(thread_id or "", []))
