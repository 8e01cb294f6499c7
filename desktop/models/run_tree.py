"""`RunTree`: the plans of every thread, their tasks and each task's subagent activity (no Qt).

A delegated plan works in the background of its thread while the author is anywhere, so the
tree holds every thread's plans, not only the shown thread's: `plan/list` loads them all when
the window connects, `plan/get` the shown thread's (whole, with its autonomy switch), and
`plan_update`, `task_update` and `subagent_event` run events of any thread keep them current.
Events that arrive while a load is in flight are held and replayed on top of its snapshot, so
nothing seen meanwhile is lost or shown out of order.

A plan that ends while its thread is not shown is *unread* until the author shows that thread
or opens the plan (`mark_read`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.models.activity import ActivityLog, nested_event
from desktop.models.emitter import Emitter
from sidecar.protocol import (
    PlanGetResult,
    PlanInfo,
    PlanListResult,
    PlanUpdate,
    RunEventBody,
    RunEventParams,
    SubagentEvent,
    TaskInfo,
    TaskUpdate,
)

TaskKey = tuple[str, str]
"""(plan_id, task_id)"""

_ACTIVE = ("running", "waiting")
_ENDED = frozenset({"completed", "failed", "aborted"})
"""How a plan ends by running (a rejected or superseded plan never ran to a result)."""


def can_cancel(task: TaskInfo) -> bool:
    """`task/cancel` applies to a task that runs or waits."""
    return task.status in _ACTIVE


def can_retry(task: TaskInfo) -> bool:
    """`task/retry` applies to a task that failed, was cancelled or was skipped."""
    return task.status in ("failed", "cancelled", "skipped")


def elapsed_seconds(task: TaskInfo, now: float) -> float | None:
    """Seconds the task has run (up to `now` while it is still going); None before it starts."""
    if task.started_at is None:
        return None
    end = task.finished_at if task.finished_at is not None else now
    return max(0.0, end - task.started_at)


def format_elapsed(seconds: float | None) -> str:
    if seconds is None:
        return ""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


@dataclass
class TaskNode:
    """One task as last reported, its subagent activity, and the last refused action on it
    (`error`, `error_code`), shown in place until the task changes again."""

    info: TaskInfo
    activity: ActivityLog = field(default_factory=ActivityLog)
    error: str | None = None
    error_code: int | None = None

    @property
    def key(self) -> TaskKey:
        return (self.info.plan_id, self.info.id)


class RunTree:
    """Threads → plans (oldest first) → tasks → activity; `thread_id` is the shown thread.

    Events:
        reset(): the structure changed (a thread shown, a snapshot loaded).
        plan_changed(plan_id): one plan was added or changed (its tasks too).
        task_changed(plan_id, task_id): one task's fields or its error changed.
        activity_changed(plan_id, task_id): a task's subagent activity changed.
        read_changed(plan_id): the plan became unread or read.
        autonomous_changed(bool), error_changed(): header state changed.
        resync_needed(thread_id): events were missed (a task of an unknown plan); load that
            thread's plans again (the shown thread's with `plan/get`, others with `plan/list`).
    """

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.autonomous = False
        self.loading = False
        self.loading_all = False
        self.error: str | None = None
        self._list_error: str | None = None
        self._plans: dict[str, list[PlanInfo]] = {}
        self._thread_of: dict[str, str] = {}
        self._order: dict[str, list[str]] = {}
        self._tasks: dict[TaskKey, TaskNode] = {}
        self._held: list[RunEventParams] = []
        self._last_seq: dict[str, int] = {}
        self._unread: set[str] = set()
        self._resynced: set[str] = set()
        self.reset: Emitter[[]] = Emitter()
        self.plan_changed: Emitter[[str]] = Emitter()
        self.task_changed: Emitter[[str, str]] = Emitter()
        self.activity_changed: Emitter[[str, str]] = Emitter()
        self.read_changed: Emitter[[str]] = Emitter()
        self.autonomous_changed: Emitter[[bool]] = Emitter()
        self.error_changed: Emitter[[]] = Emitter()
        self.resync_needed: Emitter[[str]] = Emitter()

    @property
    def plans(self) -> tuple[PlanInfo, ...]:
        """The shown thread's plans, newest last."""
        return self.plans_of(self.thread_id)

    def plans_of(self, thread_id: str | None) -> tuple[PlanInfo, ...]:
        return tuple(self._plans.get(thread_id, ())) if thread_id is not None else ()

    def threads(self) -> list[str]:
        """Threads to show: the shown one first, then every other thread with plans, the one
        with the newest plan first."""
        others = [t for t, plans in self._plans.items() if plans and t != self.thread_id]
        others.sort(key=lambda t: max(p.created_at for p in self._plans[t]), reverse=True)
        return others if self.thread_id is None else [self.thread_id, *others]

    def plan(self, plan_id: str) -> PlanInfo | None:
        for plan in self._plans.get(self._thread_of.get(plan_id, ""), ()):
            if plan.id == plan_id:
                return plan
        return None

    def thread_of(self, plan_id: str) -> str | None:
        """The thread a known plan belongs to."""
        return self._thread_of.get(plan_id)

    def tasks(self, plan_id: str) -> list[TaskNode]:
        """The plan's tasks in plan order."""
        return [self._tasks[(plan_id, task_id)] for task_id in self._order.get(plan_id, [])]

    def task(self, plan_id: str, task_id: str) -> TaskNode | None:
        return self._tasks.get((plan_id, task_id))

    def find_task(self, task_id: str, thread_id: str | None = None) -> TaskNode | None:
        """The task with this id in the newest plan of the thread (default: the shown one) that
        has one (subagent events and interrupts name a task but not always its plan)."""
        for plan in reversed(self.plans_of(thread_id or self.thread_id)):
            node = self._tasks.get((plan.id, task_id))
            if node is not None:
                return node
        return None

    def is_unread(self, plan_id: str) -> bool:
        return plan_id in self._unread

    def unread_count(self, thread_id: str) -> int:
        return sum(plan.id in self._unread for plan in self._plans.get(thread_id, ()))

    def mark_read(self, plan_id: str) -> None:
        """The author opened the plan: its end is no longer news."""
        if plan_id in self._unread:
            self._unread.discard(plan_id)
            self.read_changed.emit(plan_id)

    def select(self, thread_id: str | None) -> None:
        """Show another thread: its plans stay as known until `load`, which replaces them; its
        run events are held meanwhile. Its unread plans are read now."""
        self.thread_id = thread_id
        self.loading = thread_id is not None
        self.autonomous = False
        self.error = None
        for plan in self.plans_of(thread_id):
            self._unread.discard(plan.id)
        self.reset.emit()
        self.error_changed.emit()
        self.autonomous_changed.emit(False)
        self._release_held()  # the thread shown before waits on its `plan/get` no longer

    def begin_reload(self) -> None:
        """A `plan/get` went out for the shown thread: hold its events until `load`."""
        if self.thread_id is not None:
            self.loading = True

    def begin_load_all(self) -> None:
        """A `plan/list` went out: hold every thread's events until `load_all`."""
        self.loading_all = True

    def load(self, result: PlanGetResult) -> None:
        """Take in `plan/get` of the shown thread (activity already seen is kept: a late reply
        for a thread shown before is dropped), then replay its held events."""
        if result.thread_id != self.thread_id:
            return
        listed = {plan.id for plan in result.plans}
        known = self._plans.get(result.thread_id, [])
        for plan in known:
            if plan.id not in listed:
                for task_id in self._order.pop(plan.id, []):
                    self._tasks.pop((plan.id, task_id), None)
        known[:] = [plan for plan in known if plan.id in listed]
        for plan in result.plans:
            self._put_plan(plan)
        self.loading = False
        self.set_error(None)
        self.set_autonomous(result.autonomous)
        self.reset.emit()
        self._release_held()

    def load_all(self, result: PlanListResult) -> None:
        """Take in `plan/list`: each listed plan added or brought up to date (a thread's older
        plans past the list's limit stay as known), then replay the held events."""
        for plan in result.plans:
            self._put_plan(plan)
        self.loading_all = False
        if self.error is not None and self.error == self._list_error:
            self.set_error(None)
        self.reset.emit()
        self._release_held()

    def fail_load(self, message: str) -> None:
        """`plan/get` failed: say so; the shown thread's held events are dropped (they would
        only ask for the load again)."""
        self.loading = False
        self._held = [p for p in self._held if p.thread_id != self.thread_id]
        self.set_error(message)
        self._release_held()

    def fail_load_all(self, message: str) -> None:
        """`plan/list` failed: say so (until a list loads); the held events are applied."""
        self.loading_all = False
        self._list_error = message
        self.set_error(message)
        self._release_held()

    def set_autonomous(self, autonomous: bool) -> None:
        if autonomous != self.autonomous:
            self.autonomous = autonomous
            self.autonomous_changed.emit(autonomous)

    def set_error(self, message: str | None) -> None:
        if message != self.error:
            self.error = message
            self.error_changed.emit()

    def set_task_error(
        self, plan_id: str, task_id: str, message: str | None, code: int | None = None
    ) -> None:
        """Show (or with None clear) why an action on the task was refused."""
        node = self._tasks.get((plan_id, task_id))
        if node is not None and (node.error, node.error_code) != (message, code):
            node.error, node.error_code = message, code
            self.task_changed.emit(plan_id, task_id)

    def apply(self, params: RunEventParams) -> None:
        """Take in one `run/event` of any thread; only coordinator events matter. Duplicates
        (a seq seen before) are dropped."""
        if not isinstance(params.event, PlanUpdate | TaskUpdate | SubagentEvent):
            return
        last = self._last_seq.get(params.run_id)
        if last is not None and params.seq <= last:
            return
        self._last_seq[params.run_id] = params.seq
        if self._holding(params.thread_id):
            self._held.append(params)
        else:
            self._apply_body(params.thread_id, params.event)

    def _holding(self, thread_id: str) -> bool:
        return self.loading_all or (self.loading and thread_id == self.thread_id)

    def _release_held(self) -> None:
        """Replay the held events no load waits for any more, in the order they came."""
        ready = [p for p in self._held if not self._holding(p.thread_id)]
        self._held = [p for p in self._held if self._holding(p.thread_id)]
        for params in ready:
            self._apply_body(params.thread_id, params.event)

    def _apply_body(self, thread_id: str, event: RunEventBody) -> None:
        match event:
            case PlanUpdate(plan=plan):
                self._put_plan(plan)
                self.plan_changed.emit(plan.id)
            case TaskUpdate(task=task):
                self._put_task(thread_id, task)
            case SubagentEvent():
                self._apply_subagent(thread_id, event)
            case _:
                pass

    def put_plan(self, plan: PlanInfo) -> None:
        """Take in a plan as a reply gave it (a pause, a resume, a cancel)."""
        self._put_plan(plan)
        self.plan_changed.emit(plan.id)

    def _put_plan(self, plan: PlanInfo) -> None:
        plans = self._plans.setdefault(plan.thread_id, [])
        before = self.plan(plan.id)
        if before is not None:
            plans[plans.index(before)] = plan
        else:
            plans.append(plan)
            plans.sort(key=lambda p: (p.created_at, p.id))
        self._thread_of[plan.id] = plan.thread_id
        if (
            plan.status in _ENDED
            and before is not None
            and before.status not in _ENDED
            and plan.thread_id != self.thread_id
        ):
            self._unread.add(plan.id)
            self.read_changed.emit(plan.id)
        self._put_tasks(plan)

    def _put_tasks(self, plan: PlanInfo) -> None:
        order = [task.id for task in plan.tasks]
        for task_id in self._order.get(plan.id, []):
            if task_id not in order:
                self._tasks.pop((plan.id, task_id), None)
        self._order[plan.id] = order
        for task in plan.tasks:
            node = self._tasks.get((plan.id, task.id))
            if node is None:
                self._tasks[(plan.id, task.id)] = TaskNode(task)
            else:
                node.info = task

    def _put_task(self, thread_id: str, task: TaskInfo) -> None:
        key = (task.plan_id, task.id)
        node = self._tasks.get(key)
        if node is None:
            if task.plan_id not in self._order:
                self._ask_resync(thread_id, task.plan_id)
                return
            self._tasks[key] = TaskNode(task)
            self._order[task.plan_id].append(task.id)
            self.plan_changed.emit(task.plan_id)
            return
        if node.info == task:
            return
        node.info, node.error, node.error_code = task, None, None
        self.task_changed.emit(*key)

    def _ask_resync(self, thread_id: str, plan_id: str) -> None:
        """A task of a plan not known: the shown thread is loaded again each time; another
        thread's plans once per unknown plan (a plan `plan/list` leaves out stays unknown)."""
        if thread_id == self.thread_id or plan_id not in self._resynced:
            self._resynced.add(plan_id)
            self.resync_needed.emit(thread_id)

    def _apply_subagent(self, thread_id: str, event: SubagentEvent) -> None:
        node = (
            self._tasks.get((event.plan_id, event.task_id))
            if event.plan_id is not None
            else self.find_task(event.task_id, thread_id)
        )
        if node is None:
            return
        body = nested_event(event)
        if body is not None and node.activity.apply(body):
            self.activity_changed.emit(*node.key)
