"""`TeamController`: what a plan's team did, asked for from the run tree on the author's behalf.

A task's stored events (`task/events`: what its agent did, also after a reopen or a restart),
its envelopes (`task/envelopes`: results, drafts and reviews, the main agent's messages,
handoffs) and its sub-thread, the subagent's own conversation (`thread/get` on the task's
`sub_thread_id`, paged like the author's transcript, never written to). Each method sends one
request and returns its `PendingRequest`; the dialog that asked takes the reply with `.then`.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.controllers.history import TranscriptPager
from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest
from desktop.models.run_tree import RunTree
from desktop.models.transcript import INITIAL_PAGE, Transcript
from sidecar.protocol import (
    ErrorObject,
    TaskEnvelopesResult,
    TaskEventsParams,
    TaskEventsResult,
    TaskRef,
    ThreadGetParams,
    ThreadGetResult,
)

TASK_EVENTS_LIMIT = 2000
"""A task's newest stored events asked for at once (the most `task/events` returns)."""

Report = Callable[[ErrorObject, str], None]


class SubThreadReader:
    """A task's sub-thread shown read-only: `load` (and `pager.jump_to_end`) reads its newest
    page into `transcript`, `pager` its older pages and searches."""

    def __init__(
        self, api: SidecarApi, thread_id: str, transcript: Transcript, report: Report
    ) -> None:
        self._api = api
        self.thread_id = thread_id
        self.transcript = transcript
        self._report = report
        self.pager = TranscriptPager(api, transcript, self.load, report)

    def load(self, _thread_id: str | None = None) -> PendingRequest[ThreadGetResult]:
        """`thread/get` of the sub-thread, into the transcript."""

        def on_result(result: ThreadGetResult) -> None:
            self.transcript.load(
                result.thread.id, result.messages, result.interrupts, result.last_error
            )

        params = ThreadGetParams(thread_id=self.thread_id, limit=INITIAL_PAGE)
        return self._api.thread_get(params).then(
            on_result, lambda error: self._report(error, "Loading the task's transcript")
        )


class TeamController:
    """A task's events, envelopes and sub-thread; refusals are reported through `report`
    (the run tree's controller says them in the status bar) and reach the caller's `.then`."""

    def __init__(self, api: SidecarApi, tree: RunTree, report: Report) -> None:
        self._api = api
        self._tree = tree
        self._report = report

    def task_events(self, plan_id: str, task_id: str) -> PendingRequest[TaskEventsResult] | None:
        """`task/events`: the task's stored events, oldest first (None: the plan is unknown)."""
        thread_id = self._tree.thread_of(plan_id)
        if thread_id is None:
            return None
        params = TaskEventsParams(
            thread_id=thread_id, plan_id=plan_id, task_id=task_id, limit=TASK_EVENTS_LIMIT
        )
        return self._api.task_events(params).then(
            None, lambda error: self._report(error, f"Reading what task {task_id} did")
        )

    def task_envelopes(
        self, plan_id: str, task_id: str
    ) -> PendingRequest[TaskEnvelopesResult] | None:
        """`task/envelopes`: what the task's agents sent and were sent (None: the plan is
        unknown)."""
        thread_id = self._tree.thread_of(plan_id)
        if thread_id is None:
            return None
        params = TaskRef(thread_id=thread_id, plan_id=plan_id, task_id=task_id)
        return self._api.task_envelopes(params).then(
            None, lambda error: self._report(error, f"Reading task {task_id}'s messages")
        )

    def sub_thread(self, sub_thread_id: str, transcript: Transcript) -> SubThreadReader:
        """A reader of the sub-thread into `transcript` (call its `load`)."""
        return SubThreadReader(self._api, sub_thread_id, transcript, self._report)
