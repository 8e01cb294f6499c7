"""`SessionController`: turns the author's actions into requests and replies into state.

Sits between the views (which call its methods) and the typed `SidecarApi` (over the
`RpcClient`, or a fake sender in tests). It never waits: each method sends a request and returns
its `PendingRequest`; the reply updates `SessionState`, and the views follow the state's events.
"""

from __future__ import annotations

import logging

from desktop.controllers.history import TranscriptPager
from desktop.ipc.api import SidecarApi
from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.pending import PendingRequest
from desktop.models.emitter import Emitter
from desktop.models.session import SessionState
from desktop.models.transcript import INITIAL_PAGE
from sidecar.protocol import (
    DEFAULT_THREAD_TITLE,
    CompactionParams,
    CompactionResult,
    Empty,
    ErrorCode,
    ErrorObject,
    MemoryEventsParams,
    MemoryEventsResult,
    QueueMode,
    RunEventParams,
    RunRef,
    RunResumeParams,
    RunStartParams,
    SettingsInfo,
    SettingsSetParams,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadMessagesResult,
    ThreadRef,
    ThreadRenameParams,
    ThreadSearchResult,
    ThreadStatus,
    WireModel,
)

logger = logging.getLogger(__name__)

TITLE_LENGTH = 48


_CLIENT_CODES = frozenset(int(code) for code in ClientErrorCode)


def _sidecar_answered(error: ErrorObject) -> bool:
    """The sidecar itself refused (not: no sidecar running, or it exited meanwhile)."""
    return error.code not in _CLIENT_CODES


def title_from_text(text: str) -> str:
    """A thread title from the first line of the author's first message."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= TITLE_LENGTH else first[: TITLE_LENGTH - 1].rstrip() + "…"


class SessionController:
    """Author actions → requests; replies and run events → `SessionState`. No Qt.

    Events:
        error_reported(str): a request failed; a short sentence for the status bar.
        message_refused(thread_id | None, text, ErrorObject): a message the author sent was not
            taken (`run/start` refused — e.g. QUEUE_FULL, THREAD_BUSY — the thread could not
            be created, or no sidecar runs): its text, for the composer to take back.
    """

    def __init__(self, api: SidecarApi, state: SessionState) -> None:
        self.error_reported: Emitter[[str]] = Emitter()
        self.message_refused: Emitter[[str | None, str, ErrorObject]] = Emitter()
        self._api = api
        self.state = state
        self.pager = TranscriptPager(
            api,
            state.transcript,
            self.fetch_thread,
            self._report,
            lambda thread_id: state.run_state(thread_id).is_running,
        )
        state.resync_needed.connect(self._on_resync_needed)

    def refresh(self) -> PendingRequest[ThreadListResult]:
        """Reload the thread list, then the selected thread (after every (re)connect)."""
        return self._api.thread_list().then(self._on_thread_list, self._report)

    def handle_run_event(self, params: RunEventParams) -> None:
        self.state.apply_event(params)

    def select_thread(self, thread_id: str | None) -> None:
        if thread_id == self.state.selected_thread_id:
            return
        self.state.select(thread_id)
        if thread_id is not None:
            self.fetch_thread(thread_id)

    def fetch_thread(self, thread_id: str) -> PendingRequest[ThreadGetResult]:
        def on_error(error: ErrorObject) -> None:
            if error.code == ErrorCode.THREAD_NOT_FOUND:
                self.state.remove_thread(thread_id)
            else:
                self._report(error, "Loading the thread")

        params = ThreadGetParams(thread_id=thread_id, limit=INITIAL_PAGE)
        return self._api.thread_get(params).then(self._on_thread_get, on_error)

    def load_older(self) -> PendingRequest[ThreadMessagesResult] | None:
        """The page before the first message shown (None: nothing older, or no thread)."""
        return self.pager.load_older()

    def load_newer(self) -> PendingRequest[ThreadMessagesResult] | None:
        """The page after the last message shown, while the transcript is detached from the
        live end; reaching the end during a run reloads the thread (its live part)."""
        return self.pager.load_newer()

    def jump_to_start(self) -> PendingRequest[ThreadMessagesResult] | None:
        """Show the thread's first page."""
        return self.pager.jump_to_start()

    def jump_to_end(self) -> PendingRequest | None:
        """Back to the live end of the selected thread."""
        return self.pager.jump_to_end()

    def reveal_message(
        self, message_id: str, seq: int
    ) -> PendingRequest[ThreadMessagesResult] | None:
        """Show the page around a message (a search hit) unless it is shown already."""
        return self.pager.reveal_message(message_id, seq)

    def search_thread(self, query: str) -> PendingRequest[ThreadSearchResult] | None:
        """Full-text search in the selected thread; the caller takes the `ThreadSearchResult`."""
        return self.pager.search_thread(query)

    def create_thread(
        self, title: str = DEFAULT_THREAD_TITLE, first_message: str = ""
    ) -> PendingRequest[ThreadInfo]:
        """Create a thread and select it; with `first_message`, send that into it (a refused
        creation hands the message back through `message_refused`). Left untitled, the
        sidecar names it after the author's first message when that turn ends."""

        def on_created(thread: ThreadInfo) -> None:
            self.state.add_thread(thread)
            self.state.select(thread.id, loaded=True)
            if first_message:
                self.send_message(first_message)

        def on_error(error: ErrorObject) -> None:
            self._report(error, "Creating the thread")
            if first_message:
                self.message_refused.emit(None, first_message, error)

        params = ThreadCreateParams(title=title)
        return self._api.thread_create(params).then(on_created, on_error)

    def rename_thread(self, thread_id: str, title: str) -> PendingRequest[ThreadInfo]:
        params = ThreadRenameParams(thread_id=thread_id, title=title)
        return self._api.thread_rename(params).then(self.state.add_thread, self._report)

    def move_thread(self, thread_id: str, channel: str | None) -> PendingRequest[CompactionResult]:
        """File the thread under `channel` (None: under none); the list follows the reply."""

        def on_moved(result: CompactionResult) -> None:
            self.state.threads.set_channel(thread_id, result.channel)

        params = CompactionParams(thread_id=thread_id, channel=channel, set_channel=True)
        return self._api.thread_compaction(params).then(
            on_moved, lambda error: self._report(error, "Moving the thread")
        )

    def delete_thread(self, thread_id: str) -> PendingRequest[Empty]:
        def on_deleted(_result: object) -> None:
            was_selected = thread_id == self.state.selected_thread_id
            self.state.remove_thread(thread_id)
            if was_selected and self.state.selected_thread_id is not None:
                self.fetch_thread(self.state.selected_thread_id)

        params = ThreadRef(thread_id=thread_id)
        return self._api.thread_delete(params).then(on_deleted, self._report)

    def send_message(
        self, text: str, mode: QueueMode | None = None
    ) -> PendingRequest[ThreadInfo] | PendingRequest[RunRef] | None:
        """Start a turn with `text` in the selected thread (creating a thread if none is).

        While the thread's turn runs, or the thread waits on the author's answer to a question
        (an approval, a form, a plan), the sidecar queues it (`mode`, else the thread's default;
        an `interrupt` drops the question and starts a turn). A queued message shows in the
        queue under the turn, not in the transcript, until it is delivered: a message typed
        while a dialog is open is never lost and never held back in the composer. A delegated
        plan working in the background holds nothing back: its questions are not the turn's.

        A message the sidecar does not take (`QUEUE_FULL`, a refused thread, no sidecar
        running) is never lost either: `message_refused` hands its text back."""
        text = text.strip()
        if not text:
            return None
        thread_id = self.state.selected_thread_id
        if thread_id is None:
            return self.create_thread(title_from_text(text), first_message=text)
        if self.state.run_state(thread_id).is_running or self.state.waiting_on_author(thread_id):
            queued = RunStartParams(thread_id=thread_id, text=text, mode=mode)
            return self._api.run_start(queued).then(
                None, lambda error: self._on_queueing_refused(thread_id, text, error)
            )
        previous = self.state.run_state(thread_id).status
        if self.state.transcript.has_newer:
            self.fetch_thread(thread_id)  # back to the live end, where the message goes
        self.state.note_message_sent(thread_id, text)
        params = RunStartParams(thread_id=thread_id, text=text)

        def on_refused(error: ErrorObject) -> None:
            self._on_run_refused(thread_id, previous, error, reload=False)
            self.message_refused.emit(thread_id, text, error)
            if thread_id == self.state.selected_thread_id and _sidecar_answered(error):
                # The transcript shows the message as sent: reloading drops it. (With no
                # sidecar to ask, the reload after it starts again does.)
                self.fetch_thread(thread_id)

        return self._api.run_start(params).then(None, on_refused)

    def cancel_run(self, thread_id: str | None = None) -> PendingRequest[Empty] | None:
        thread_id = thread_id or self.state.selected_thread_id
        if thread_id is None:
            return None
        params = ThreadRef(thread_id=thread_id)
        return self._api.run_cancel(params).then(None, self._report)

    def retry_run(self, thread_id: str | None = None) -> PendingRequest[RunRef] | None:
        """Continue the failed or cancelled turn of a thread (default: the selected one)."""
        thread_id = thread_id or self.state.selected_thread_id
        if thread_id is None:
            return None
        previous = self.state.run_state(thread_id).status
        self.state.note_run_requested(thread_id)
        return self._api.run_retry(ThreadRef(thread_id=thread_id)).then(
            None, lambda error: self._on_run_refused(thread_id, previous, error)
        )

    def answer_interrupt(
        self, thread_id: str, interrupt_id: str, value: WireModel
    ) -> PendingRequest[RunRef]:
        """Resume the thread with the author's answer to one pending interrupt (any resume
        value model: `ApprovalValue`, `QuestionValue`, `PlanApprovalValue`, ...)."""

        def on_resumed(_ref: RunRef) -> None:
            self.state.inbox.remove(thread_id, interrupt_id)

        def on_error(error: ErrorObject) -> None:
            self._report(error, "Answering")
            if error.code in (ErrorCode.NO_SUCH_INTERRUPT, ErrorCode.NOTHING_TO_RESUME):
                self.state.inbox.remove(thread_id, interrupt_id)
                self.fetch_thread(thread_id)

        body = value.model_dump(mode="json", exclude_none=True)
        params = RunResumeParams(thread_id=thread_id, interrupt_id=interrupt_id, value=body)
        return self._api.run_resume(params).then(on_resumed, on_error)

    def load_settings(self) -> PendingRequest[SettingsInfo]:
        """`settings/get`; the caller hooks the `SettingsInfo` with `.then`."""
        return self._api.settings_get().then(None, self._report)

    def save_settings(self, params: SettingsSetParams) -> PendingRequest[SettingsInfo]:
        return self._api.settings_set(params).then(
            None, lambda error: self._report(error, "Saving the settings")
        )

    def _on_thread_list(self, result: ThreadListResult) -> None:
        self.state.set_threads(result.threads)
        selected = self.state.selected_thread_id
        if selected is not None and self.state.threads.get(selected) is not None:
            self.fetch_thread(selected)
        elif result.threads:
            self.state.select(None)
            self.select_thread(result.threads[0].id)
        else:
            self.state.select(None)

    def _on_thread_get(self, result: ThreadGetResult) -> None:
        self.state.load_thread(result)
        self._load_memory_events(result.thread.id)

    def _load_memory_events(self, thread_id: str) -> PendingRequest[MemoryEventsResult] | None:
        """Chips of the thread's memories saved or forgotten before this session, asked for
        once per thread after its first load (so every live event sent before is in); a
        failure is logged, not shown: the chips are a convenience, the memories are intact."""
        transcript = self.state.transcript
        if not transcript.marks.wants_memory_events(thread_id):
            return None

        def on_events(result: MemoryEventsResult) -> None:
            transcript.add_stored_chips(thread_id, result.events)

        def on_error(error: ErrorObject) -> None:
            logger.warning("Reading memory events failed: %s (%s)", error.message, error.code)
            transcript.marks.memory_events_failed(thread_id)

        params = MemoryEventsParams(thread_id=thread_id)
        return self._api.memory_events(params).then(on_events, on_error)

    def _on_run_refused(
        self, thread_id: str, previous: ThreadStatus, error: ErrorObject, *, reload: bool = True
    ) -> None:
        status: ThreadStatus = previous if previous != "running" else "idle"
        self.state.note_run_refused(thread_id, status, error.message)
        self._report(error, "Starting the turn")
        if reload and error.code == ErrorCode.THREAD_BUSY:
            self.fetch_thread(thread_id)

    def _on_queueing_refused(self, thread_id: str, text: str, error: ErrorObject) -> None:
        self._report(error, "Queueing the message")
        self.message_refused.emit(thread_id, text, error)

    def _on_resync_needed(self, thread_id: str) -> None:
        self.fetch_thread(thread_id)

    def _report(self, error: ErrorObject, what: str = "The request") -> None:
        logger.warning("%s failed: %s (%s)", what, error.message, error.code)
        self.error_reported.emit(f"{what} failed: {error.message}")
