"""`CoordController`: requests of the run tree and the profiles tab, replies into `RunTree`.

Like the other controllers it never waits: each method sends one request and returns its
`PendingRequest`. Plan and task replies update `RunTree` (the plans of every thread: a task's
actions go to its plan's thread, whichever thread is shown); a refused task action is shown on
the task itself (`RunTree.set_task_error`), a refused `plan/get`, `plan/list` or autonomy switch
in the tree's header (`RunTree.error`). Profile replies go to the caller's `.then` (the profiles
tab); what a task's team did is asked through `team` (`TeamController`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from desktop.controllers.budget import ThreadBudgetController
from desktop.controllers.team import TeamController
from desktop.ipc.api import SidecarApi
from desktop.ipc.pending import PendingRequest, ResultT
from desktop.models.emitter import Emitter
from desktop.models.run_tree import RunTree
from sidecar.protocol import (
    AgentProvidersResult,
    AutonomousParams,
    CoordEmpty,
    CoordErrorCode,
    ErrorObject,
    PlanControlResult,
    PlanGetParams,
    PlanGetResult,
    PlanListParams,
    PlanListResult,
    PlanRef,
    ProfileInfo,
    ProfileListResult,
    ProfileSetParams,
    RunEventParams,
    TaskMessageParams,
    TaskMessageResult,
    TaskRef,
    TaskRetryResult,
)

logger = logging.getLogger(__name__)

_TASK_ERRORS = {
    CoordErrorCode.NO_SUCH_TASK: "The task no longer exists",
    CoordErrorCode.NO_SUCH_PLAN: "The plan no longer exists",
    CoordErrorCode.PLAN_NOT_RUNNING: "The plan is not running",
    CoordErrorCode.PLAN_NOT_PAUSED: "The plan is not paused",
    CoordErrorCode.TASK_NOT_RETRYABLE: "Only a failed, cancelled or skipped task can be retried",
    CoordErrorCode.TASK_NOT_RUNNING: "The task is not running",
}


def describe_coord_error(error: ErrorObject) -> str:
    """A sentence for a coordinator error: the known codes in plain words, plus the detail."""
    try:
        known = _TASK_ERRORS.get(CoordErrorCode(error.code))
    except ValueError:
        known = None
    if known is None:
        return error.message
    return f"{known} ({error.message})" if error.message else known


class CoordController:
    """Plans, tasks, autonomy and profiles → requests; replies and run events → `RunTree`.

    Events:
        error_reported(str): a request failed; a short sentence for the status bar.
    """

    def __init__(self, api: SidecarApi, tree: RunTree | None = None) -> None:
        self.error_reported: Emitter[[str]] = Emitter()
        self._api = api
        self.tree = tree if tree is not None else RunTree()
        self.tree.resync_needed.connect(self._on_resync_needed)
        self.budget = ThreadBudgetController(api)
        self.team = TeamController(api, self.tree, self._log)

    def handle_run_event(self, params: RunEventParams) -> None:
        self.tree.apply(params)
        self.budget.handle_run_event(params)

    def refresh(self) -> None:
        """After a (re)connect: the plans of every thread, and the shown thread's whole."""
        self.load_all()
        self.reload()

    def load_all(self) -> PendingRequest[PlanListResult]:
        """`plan/list`: the plans of every thread (a delegated plan runs in the background of
        its thread, shown or not)."""

        def on_error(error: ErrorObject) -> None:
            logger.warning("plan/list failed: %s (%s)", error.message, error.code)
            self.tree.fail_load_all(f"Loading the plans of every thread failed: {error.message}")

        self.tree.begin_load_all()
        return self._api.plan_list(PlanListParams()).then(self.tree.load_all, on_error)

    def open_plan(self, plan_id: str) -> None:
        """The author opened a plan in the tree: its end is read."""
        self.tree.mark_read(plan_id)

    def show_thread(self, thread_id: str | None) -> PendingRequest[PlanGetResult] | None:
        """Show `thread_id`'s plans (None: nothing) and load them."""
        if thread_id == self.tree.thread_id and not self.tree.error:
            return None
        self.tree.select(thread_id)
        self.budget.show_thread(thread_id)
        return self.reload()

    def reload(self) -> PendingRequest[PlanGetResult] | None:
        """`plan/get` for the shown thread (after a (re)connect, a gap, or on request)."""
        thread_id = self.tree.thread_id
        if thread_id is None:
            return None

        def on_error(error: ErrorObject) -> None:
            if thread_id == self.tree.thread_id:
                self.tree.fail_load(f"Loading the plans failed: {error.message}")

        self.tree.begin_reload()
        params = PlanGetParams(thread_id=thread_id)
        return self._api.plan_get(params).then(self._on_plan_get, on_error)

    def cancel_task(self, plan_id: str, task_id: str) -> PendingRequest[CoordEmpty] | None:
        """`task/cancel`; the task's new state arrives as a `task_update` (and is reloaded:
        its dependents were skipped too)."""
        return self._task_action(self._api.task_cancel, "Cancel", plan_id, task_id, reload=True)

    def retry_task(self, plan_id: str, task_id: str) -> PendingRequest[TaskRetryResult] | None:
        """`task/retry`; the run that continues the plan streams the task's progress."""
        return self._task_action(self._api.task_retry, "Retry", plan_id, task_id)

    def message_task(
        self, plan_id: str, task_id: str, text: str
    ) -> PendingRequest[TaskMessageResult] | None:
        """`task/message`: how the task will read it shows on the task (a refusal too)."""
        thread_id = self.tree.thread_of(plan_id)
        if thread_id is None:
            return None

        def on_result(result: TaskMessageResult) -> None:
            self.tree.set_task_error(plan_id, task_id, None)
            self.tree.set_error(result.note)  # the tree's status line says how it is read

        def on_error(error: ErrorObject) -> None:
            self._log(error, f"A message to task {task_id}")
            message = f"Message not sent: {describe_coord_error(error)}"
            self.tree.set_task_error(plan_id, task_id, message, error.code)

        params = TaskMessageParams(thread_id=thread_id, task_id=task_id, plan_id=plan_id, text=text)
        return self._api.task_message(params).then(on_result, on_error)

    def pause_plan(self, plan_id: str) -> PendingRequest[PlanControlResult] | None:
        """`plan/pause`: its agents stop where they are; the tree shows the paused plan."""
        return self._plan_action(self._api.plan_pause, "Pause", plan_id)

    def resume_plan(self, plan_id: str) -> PendingRequest[PlanControlResult] | None:
        """`plan/resume`: the plan's new background run streams its progress."""
        return self._plan_action(self._api.plan_resume, "Resume", plan_id)

    def cancel_plan(self, plan_id: str) -> PendingRequest[PlanControlResult] | None:
        """`plan/cancel`: it ends as aborted (announced in its thread like any end)."""
        return self._plan_action(self._api.plan_cancel, "Cancel", plan_id)

    def _plan_action(
        self,
        send: Callable[[PlanRef], PendingRequest[PlanControlResult]],
        verb: str,
        plan_id: str,
    ) -> PendingRequest[PlanControlResult] | None:
        thread_id = self.tree.thread_of(plan_id)
        if thread_id is None:
            return None

        def on_result(result: PlanControlResult) -> None:
            self.tree.set_error(None)
            self.tree.put_plan(result.plan)

        def on_error(error: ErrorObject) -> None:
            self._log(error, f"{verb} of plan {plan_id}")
            self.tree.set_error(f"{verb} failed: {describe_coord_error(error)}")

        return send(PlanRef(thread_id=thread_id, plan_id=plan_id)).then(on_result, on_error)

    def set_autonomous(self, autonomous: bool) -> PendingRequest[CoordEmpty] | None:
        """`thread/set_autonomous` for the shown thread; the switch follows the reply."""
        thread_id = self.tree.thread_id
        if thread_id is None:
            return None

        def on_result(_done: CoordEmpty) -> None:
            if thread_id == self.tree.thread_id:
                self.tree.set_error(None)
                self.tree.set_autonomous(autonomous)

        def on_error(error: ErrorObject) -> None:
            self._log(error, "Switching autonomous plans")
            if thread_id == self.tree.thread_id:
                self.tree.set_error(f"Switching autonomous plans failed: {error.message}")
                self.tree.autonomous_changed.emit(self.tree.autonomous)

        params = AutonomousParams(thread_id=thread_id, autonomous=autonomous)
        return self._api.thread_set_autonomous(params).then(on_result, on_error)

    def list_profiles(self) -> PendingRequest[ProfileListResult]:
        """`profile/list`; chain `.then` for the `ProfileListResult`."""
        return self._api.profile_list()

    def list_agent_providers(self) -> PendingRequest[AgentProvidersResult]:
        """`agents/providers`; chain `.then` for the `AgentProvidersResult` (the strong-agent
        CLIs the profiles' kinds drive: found or not, version, what is missing)."""
        return self._api.agents_providers()

    def save_profiles(self, profiles: tuple[ProfileInfo, ...]) -> PendingRequest[ProfileListResult]:
        """`profile/set` (replaces every profile); chain `.then` for the saved list, or the
        error (`PROFILES_INVALID` says what is wrong)."""
        return self._api.profile_set(ProfileSetParams(profiles=profiles))

    def _task_action(
        self,
        send: Callable[[TaskRef], PendingRequest[ResultT]],
        verb: str,
        plan_id: str,
        task_id: str,
        *,
        reload: bool = False,
    ) -> PendingRequest[ResultT] | None:
        thread_id = self.tree.thread_of(plan_id)
        if thread_id is None:
            return None

        def on_result(_result: object) -> None:
            self.tree.set_task_error(plan_id, task_id, None)
            if reload and thread_id == self.tree.thread_id:
                self.reload()
            elif reload:
                self.load_all()

        def on_error(error: ErrorObject) -> None:
            self._log(error, f"{verb} of task {task_id}")
            message = f"{verb} failed: {describe_coord_error(error)}"
            self.tree.set_task_error(plan_id, task_id, message, error.code)

        params = TaskRef(thread_id=thread_id, task_id=task_id, plan_id=plan_id)
        return send(params).then(on_result, on_error)

    def _on_plan_get(self, result: PlanGetResult) -> None:
        self.tree.load(result)

    def _on_resync_needed(self, thread_id: str) -> None:
        if thread_id == self.tree.thread_id:
            if not self.tree.loading:
                self.reload()
        elif not self.tree.loading_all:
            self.load_all()

    def _log(self, error: ErrorObject, what: str) -> None:
        logger.warning("%s failed: %s (%s)", what, error.message, error.code)
        self.error_reported.emit(f"{what} failed: {error.message}")
