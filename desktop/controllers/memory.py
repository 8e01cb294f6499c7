"""`MemoryController`: the Memory panel's requests, and memory run events as state.

Never waits: each method sends one request and returns its `PendingRequest`; replies update
`MemoryState`. `context` and `memory` run events are kept per thread, so the panel can show
what the agent saw on each turn and which memories it saved or forgot. `load_summaries` reads
where each summary of a thread's earlier messages ends, for the transcript's dividers.
A thread's compaction (automatic or off, compact now) and its export (Markdown or JSON) are
`thread/compaction` and `thread/export`; the thread list's menu offers them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeAlias

from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import ErrorCallback, PendingRequest, ResultT
from desktop.models.emitter import Emitter
from desktop.models.memory import MemoryState
from sidecar.protocol import (
    CompactionParams,
    CompactionResult,
    ContextEvent,
    ErrorObject,
    IdentityFileInfo,
    IdentityGetResult,
    IdentitySetParams,
    MemoryEvent,
    MemoryInfo,
    MemoryKeyParams,
    MemoryListParams,
    MemoryListResult,
    MemoryTier,
    MemoryUpdateParams,
    MemoryWriteParams,
    RunEventParams,
    SummaryInfo,
    ThreadExportParams,
    ThreadExportResult,
    TurnUsageEvent,
)

logger = logging.getLogger(__name__)

SummaryPlaced = Callable[[SummaryInfo, str], None]
"""(a summary, the id of the first message after its range)."""

CompactionMode: TypeAlias = Literal["auto", "off"]
ExportFormat: TypeAlias = Literal["markdown", "json"]


class MemoryController:
    """Events: error_reported(str); compaction_changed(thread_id): the thread's known compaction
    mode changed, or a change of it was refused (what shows it shows `compaction_mode` again)."""

    def __init__(self, api: SidecarApi, state: MemoryState | None = None) -> None:
        self.error_reported: Emitter[[str]] = Emitter()
        self.compaction_changed: Emitter[[str]] = Emitter()
        self._api = api
        self.state = state if state is not None else MemoryState()
        self._last_list: MemoryListParams | None = None
        self._compaction: dict[str, CompactionMode] = {}

    def handle_run_event(self, params: RunEventParams) -> None:
        event = params.event
        if isinstance(event, ContextEvent):
            self.state.add_context(params.thread_id, params.run_id, event)
        elif isinstance(event, MemoryEvent):
            self.state.add_change(params.thread_id, params.run_id, event)
        elif isinstance(event, TurnUsageEvent):
            self.state.add_usage(params.thread_id, params.run_id, event)

    def refresh(
        self,
        thread_id: str,
        tier: MemoryTier | None = None,
        query: str | None = None,
        *,
        unreviewed: bool = False,
    ) -> PendingRequest[MemoryListResult]:
        """List the thread's memories (a tier, a search; `unreviewed`: only what the agent
        saved that the author has not reviewed)."""
        params = MemoryListParams(
            thread_id=thread_id, tier=tier, query=query or None, unreviewed=unreviewed
        )
        self._last_list = params
        return self._send(self._api.memory_list(params), "Listing memories", self._on_list)

    def write(
        self, thread_id: str, tier: MemoryTier, text: str, pinned: bool
    ) -> PendingRequest[MemoryInfo]:
        params = MemoryWriteParams(thread_id=thread_id, tier=tier, text=text, pinned=pinned)
        return self._send(self._api.memory_write(params), "Saving the memory", self._reload)

    def update(
        self,
        thread_id: str,
        key: str,
        *,
        text: str | None = None,
        tier: MemoryTier | None = None,
        pinned: bool | None = None,
    ) -> PendingRequest[MemoryInfo]:
        params = MemoryUpdateParams(
            thread_id=thread_id, key=key, text=text, tier=tier, pinned=pinned
        )
        return self._send(self._api.memory_update(params), "Changing the memory", self._reload)

    def keep(self, thread_id: str, key: str) -> PendingRequest[MemoryInfo]:
        """Mark what the agent saved reviewed: the author keeps it as it is."""
        params = MemoryUpdateParams(thread_id=thread_id, key=key, reviewed=True)
        return self._send(self._api.memory_update(params), "Keeping the memory", self._reload)

    def forget(self, thread_id: str, key: str) -> PendingRequest[MemoryInfo]:
        params = MemoryKeyParams(thread_id=thread_id, key=key)
        return self._send(self._api.memory_forget(params), "Forgetting the memory", self._reload)

    def load_summaries(
        self, thread_id: str, on_placed: SummaryPlaced
    ) -> PendingRequest[CompactionResult]:
        """Read the thread's summaries (`thread/compaction`, changing nothing); `on_placed` is
        called for each with the first message after its range that shows as a row (the
        summary's `next_id`). A range with no such message after it has no divider."""

        def on_result(result: CompactionResult) -> None:
            self._note_compaction(thread_id, result)
            for summary in result.summaries:
                if summary.next_id is not None:
                    on_placed(summary, summary.next_id)

        params = CompactionParams(thread_id=thread_id)
        return self._send(self._api.thread_compaction(params), "Reading the summaries", on_result)

    def compaction_mode(self, thread_id: str) -> CompactionMode | None:
        """Whether the thread compacts by itself, as last read or set (None: not known yet)."""
        return self._compaction.get(thread_id)

    def load_compaction(self, thread_id: str) -> PendingRequest[CompactionResult]:
        """Read the thread's compaction mode (`thread/compaction`, changing nothing); a failure
        is logged, not shown: the mode is only shown as a check mark, and it stays as it was."""

        def on_error(error: ErrorObject) -> None:
            logger.info("reading the compaction mode failed: %s (%s)", error.message, error.code)

        params = CompactionParams(thread_id=thread_id)
        return self._api.thread_compaction(params).then(
            lambda result: self._note_compaction(thread_id, result), on_error
        )

    def set_compaction(
        self, thread_id: str, mode: CompactionMode
    ) -> PendingRequest[CompactionResult]:
        """Turn the thread's automatic compaction on (`auto`) or off."""
        params = CompactionParams(thread_id=thread_id, mode=mode)
        return self._send_compaction(params, "Changing the compaction setting")

    def compact_now(self, thread_id: str) -> PendingRequest[CompactionResult]:
        """Summarize the thread's older messages now (a `/compact` turn: at once on an idle
        thread, right after the running turn otherwise), automatic compaction on or off."""
        params = CompactionParams(thread_id=thread_id, compact_now=True)
        return self._send_compaction(params, "Compacting the thread")

    def export(
        self, thread_id: str, export_format: ExportFormat
    ) -> PendingRequest[ThreadExportResult]:
        """`thread/export`; chain `.then` for the `ThreadExportResult` (its `content`).
        Failures are left to the caller, which knows where the export was going."""
        params = ThreadExportParams(thread_id=thread_id, format=export_format)
        return self._api.thread_export(params)

    def _send_compaction(
        self, params: CompactionParams, what: str
    ) -> PendingRequest[CompactionResult]:
        thread_id = params.thread_id
        return self._send(
            self._api.thread_compaction(params),
            what,
            lambda result: self._note_compaction(thread_id, result),
            lambda _error: self.compaction_changed.emit(thread_id),
        )

    def _note_compaction(self, thread_id: str, result: CompactionResult) -> None:
        if self._compaction.get(thread_id) != result.mode:
            self._compaction[thread_id] = result.mode
            self.compaction_changed.emit(thread_id)

    def load_identity(self) -> PendingRequest[IdentityGetResult]:
        pending = self._api.identity_get()
        return self._send(pending, "Reading identity files", self._on_identity)

    def save_identity(self, path: str, text: str) -> PendingRequest[IdentityFileInfo]:
        params = IdentitySetParams.model_validate({"path": path, "text": text})
        return self._send(self._api.identity_set(params), f"Saving {path}", self._reload_identity)

    def _on_list(self, result: MemoryListResult) -> None:
        self.state.set_memories(result.memories)

    def _on_identity(self, result: IdentityGetResult) -> None:
        self.state.set_identity(result.workspace, result.files)

    def _reload_identity(self, _result: object) -> None:
        self.load_identity()

    def _reload(self, _result: object) -> None:
        if self._last_list is not None:
            pending = self._api.memory_list(self._last_list)
            self._send(pending, "Listing memories", self._on_list)

    def _send(
        self,
        pending: PendingRequest[ResultT],
        what: str,
        on_result: Callable[[ResultT], None] | None = None,
        then_error: ErrorCallback | None = None,
    ) -> PendingRequest[ResultT]:
        def on_error(error: ErrorObject) -> None:
            logger.warning("%s failed: %s (%s)", what, error.message, error.code)
            self.error_reported.emit(f"{what} failed: {error.message}")
            if then_error is not None:
                then_error(error)

        return pending.then(on_result, on_error)
