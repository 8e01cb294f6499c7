"""`SessionState`: everything the window shows, fed by replies and run events (no Qt)."""

from __future__ import annotations

from dataclasses import replace

from desktop.models.emitter import Emitter
from desktop.models.inbox import InterruptInbox
from desktop.models.threads import RunState, ThreadsState
from desktop.models.transcript import Transcript
from sidecar.protocol import (
    InterruptClosed,
    InterruptEvent,
    NodeStarted,
    RunCancelled,
    RunEventParams,
    RunFailed,
    RunFinished,
    RunStarted,
    ThreadGetResult,
    ThreadInfo,
    ThreadRenamed,
    ThreadStatus,
)


class SessionState:
    """Threads, per-thread run status, pending interrupts and the selected thread's transcript.

    Events:
        selection_changed(thread_id | None): another thread was selected.
        run_state_changed(thread_id): that thread's `RunState` changed.
        resync_needed(thread_id): events were missed (a seq gap, or a turn ended with
            interrupts the desktop cannot account for); fetch the thread again.
    """

    def __init__(self) -> None:
        self.threads = ThreadsState()
        self.transcript = Transcript()
        self.inbox = InterruptInbox()
        self.selected_thread_id: str | None = None
        self.loading = False
        self._runs: dict[str, RunState] = {}
        self._last_seq: dict[str, int] = {}
        self._held: list[RunEventParams] = []
        self._background_runs: set[str] = set()
        self.selection_changed: Emitter[[str | None]] = Emitter()
        self.run_state_changed: Emitter[[str]] = Emitter()
        self.resync_needed: Emitter[[str]] = Emitter()

    def run_state(self, thread_id: str | None = None) -> RunState:
        """The run state of a thread (default: the selected one)."""
        thread_id = thread_id if thread_id is not None else self.selected_thread_id
        return self._runs.get(thread_id or "", RunState())

    def waiting_on_author(self, thread_id: str) -> bool:
        """The thread's turn stopped on a question the author has not answered yet (a message
        sent now waits in the queue). A delegated plan's questions, asked from its background
        run, never hold the thread's turns back."""
        return self.run_state(thread_id).status == "interrupted" and self.inbox.count(thread_id) > 0

    def select(self, thread_id: str | None, *, loaded: bool = False) -> None:
        """Select a thread. Unless `loaded`, its transcript stays empty until `load_thread`;
        run events for it that arrive meanwhile are held and replayed after the load."""
        if thread_id == self.selected_thread_id:
            return
        self.selected_thread_id = thread_id
        self.loading = thread_id is not None and not loaded
        self._held = []
        self.transcript.clear(thread_id)
        self.selection_changed.emit(thread_id)

    def set_threads(self, threads: tuple[ThreadInfo, ...]) -> None:
        """Replace the thread list (after `thread/list`); statuses come from the sidecar."""
        self.threads.set_all(threads)
        for thread in threads:
            self._set_run(thread.id, replace(self.run_state(thread.id), status=thread.status))
        known = {thread.id for thread in threads}
        for thread_id, _ in self.inbox.pending():
            if thread_id not in known:
                self.inbox.drop_thread(thread_id)

    def add_thread(self, thread: ThreadInfo) -> None:
        """A created or renamed thread."""
        self.threads.upsert(thread)

    def remove_thread(self, thread_id: str) -> None:
        self.threads.remove(thread_id)
        self.inbox.drop_thread(thread_id)
        self._runs.pop(thread_id, None)
        if thread_id == self.selected_thread_id:
            first = self.threads.threads[0].id if len(self.threads) else None
            self.select(first)

    def load_thread(self, result: ThreadGetResult) -> None:
        """Take in `thread/get`: the thread's record, status, interrupts and, if it is the
        selected thread, its transcript (then replay the run events held meanwhile)."""
        thread_id = result.thread.id
        self.threads.upsert(result.thread.model_copy(update={"status": result.status}))
        error = result.last_error if result.status == "failed" else None
        self._set_run(
            thread_id, replace(self.run_state(thread_id), status=result.status, error=error)
        )
        self.inbox.replace_thread(thread_id, result.interrupts)
        if thread_id != self.selected_thread_id:
            return
        self.transcript.load(thread_id, result.messages, result.interrupts, error)
        self.loading = False
        held, self._held = self._held, []
        for params in held:
            self.transcript.apply(params.event)

    def note_message_sent(self, thread_id: str, text: str) -> None:
        """The author sent `text`: show it, and show the thread as running until told else."""
        if thread_id == self.selected_thread_id:
            self.transcript.add_local_message(text)
        self.note_run_requested(thread_id)

    def note_run_requested(self, thread_id: str) -> None:
        """A run/start, run/resume or run/retry went out; the thread counts as running."""
        self._set_run(thread_id, RunState(status="running"))
        self.threads.set_status(thread_id, "running")

    def note_run_refused(self, thread_id: str, status: ThreadStatus, message: str) -> None:
        """The sidecar refused to start a run; put the thread back as it was."""
        self._set_run(thread_id, RunState(status=status, error=message))
        self.threads.set_status(thread_id, status)

    def apply_event(self, params: RunEventParams) -> None:
        """Take in one `run/event`: run status, inbox, thread list (a title the sidecar gave
        too) and (if selected) transcript."""
        if not self._accept_seq(params):
            return
        if isinstance(params.event, ThreadRenamed):
            self._rename(params.thread_id, params.event.title)
        if params.background:
            # A delegated plan working beside the thread's turns: its updates and questions
            # never make the thread look busy, and a turn's end never drops its questions.
            self._background_runs.add(params.run_id)
        else:
            self._apply_run_state(params)
        self._apply_inbox(params)
        if params.thread_id != self.selected_thread_id:
            self.transcript.marks.note(params.thread_id, params.event)  # chips for later
            return
        if self.loading:
            self._held.append(params)
        else:
            self.transcript.apply(params.event)

    def _rename(self, thread_id: str, title: str) -> None:
        """The sidecar named the thread (it was untitled): the list and the run tree follow."""
        thread = self.threads.get(thread_id)
        if thread is not None:
            self.threads.upsert(thread.model_copy(update={"title": title}))

    def _accept_seq(self, params: RunEventParams) -> bool:
        last = self._last_seq.get(params.run_id)
        if last is not None and params.seq <= last:
            return False  # a duplicate: every run (resumes too) has its own id, seq from 0
        self._last_seq[params.run_id] = params.seq
        expected = 0 if last is None else last + 1
        if params.seq != expected and params.thread_id == self.selected_thread_id:
            self.resync_needed.emit(params.thread_id)
        return True

    def _apply_run_state(self, params: RunEventParams) -> None:
        thread_id, event = params.thread_id, params.event
        state = self.run_state(thread_id)
        match event:
            case RunStarted():
                state = RunState(status="running", run_id=params.run_id)
            case NodeStarted(node=node):
                state = replace(state, status="running", run_id=params.run_id, node=node)
            case RunFinished(outcome=outcome):
                status: ThreadStatus = "idle" if outcome == "completed" else "interrupted"
                state = RunState(status=status, run_id=params.run_id)
            case RunFailed(error=error):
                state = RunState(
                    status="failed",
                    run_id=params.run_id,
                    error=error.message,
                    error_details=error.details,
                )
            case RunCancelled():
                state = RunState(status="cancelled", run_id=params.run_id)
            case _:
                state = replace(state, status="running", run_id=params.run_id)
        self._set_run(thread_id, state)
        self.threads.set_status(thread_id, state.status)

    def _apply_inbox(self, params: RunEventParams) -> None:
        thread_id, event = params.thread_id, params.event
        if params.background and isinstance(event, RunFinished | RunFailed | RunCancelled):
            self.inbox.drop_run(thread_id, params.run_id)  # the plan's questions end with it
            return
        match event:
            case InterruptEvent(interrupt=interrupt):
                self.inbox.add(thread_id, interrupt)
            case InterruptClosed(interrupt_id=interrupt_id):
                self.inbox.remove(thread_id, interrupt_id)
            case RunFinished(outcome="completed"):
                self.inbox.drop_thread(thread_id, keep_runs=self._background_runs)
            case RunFailed() | RunCancelled() if self.inbox.count(thread_id):
                self.resync_needed.emit(thread_id)
            case _:
                pass

    def _set_run(self, thread_id: str, state: RunState) -> None:
        if self._runs.get(thread_id) != state:
            self._runs[thread_id] = state
            self.run_state_changed.emit(thread_id)
