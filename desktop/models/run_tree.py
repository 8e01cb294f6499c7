"""`RunTree`: the selected thread's plans, their tasks and each task's subagent activity (no Qt).

Loaded from `plan/get`, then kept current from the thread's `plan_update`, `task_update` and
`subagent_event` run events. Events that arrive while `plan/get` is in flight are held and
replayed on top of its snapshot, so nothing seen meanwhile is lost or shown out of order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import TypeAdapter, ValidationError

from desktop.models.activity import ActivityLog
from desktop.models.emitter import Emitter
from sidecar.protocol import (
    PlanGetResult,
    PlanInfo,
    PlanUpdate,
    RunEventBody,
    RunEventParams,
    SubagentEvent,
    TaskCheck,
    TaskInfo,
    TaskUpdate,
)

TaskKey = tuple[str, str]
"""(plan_id, task_id)"""

_EVENT_BODY: TypeAdapter[RunEventBody] = TypeAdapter(RunEventBody)
_ACTIVE = ("running", "waiting")


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
    """Thread → plans (newest last) → tasks → activity, for the one thread shown.

    Events:
        reset(): the structure changed (thread selected, loaded, a plan added or changed).
        task_changed(plan_id, task_id): one task's fields or its error changed.
        activity_changed(plan_id, task_id): a task's subagent activity changed.
        autonomous_changed(bool), error_changed(): header state changed.
        resync_needed(thread_id): events were missed (a seq gap, or a task of an unknown
            plan); load the thread's plans again.
    """

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.autonomous = False
        self.loading = False
        self.error: str | None = None
        self._plans: list[PlanInfo] = []
        self._order: dict[str, list[str]] = {}
        self._tasks: dict[TaskKey, TaskNode] = {}
        self._held: list[RunEventParams] = []
        self._last_seq: dict[str, int] = {}
        self.reset: Emitter[[]] = Emitter()
        self.task_changed: Emitter[[str, str]] = Emitter()
        self.activity_changed: Emitter[[str, str]] = Emitter()
        self.autonomous_changed: Emitter[[bool]] = Emitter()
        self.error_changed: Emitter[[]] = Emitter()
        self.resync_needed: Emitter[[str]] = Emitter()

    @property
    def plans(self) -> tuple[PlanInfo, ...]:
        return tuple(self._plans)

    def tasks(self, plan_id: str) -> list[TaskNode]:
        """The plan's tasks in plan order."""
        return [self._tasks[(plan_id, task_id)] for task_id in self._order.get(plan_id, [])]

    def task(self, plan_id: str, task_id: str) -> TaskNode | None:
        return self._tasks.get((plan_id, task_id))

    def find_task(self, task_id: str) -> TaskNode | None:
        """The task with this id in the newest plan that has one (subagent events and
        interrupts name a task but not its plan)."""
        for plan in reversed(self._plans):
            node = self._tasks.get((plan.id, task_id))
            if node is not None:
                return node
        return None

    def select(self, thread_id: str | None) -> None:
        """Show another thread: empty until `load`, holding its run events meanwhile."""
        self.thread_id = thread_id
        self.loading = thread_id is not None
        self._plans, self._order, self._tasks, self._held = [], {}, {}, []
        self.autonomous = False
        self.error = None
        self.reset.emit()
        self.error_changed.emit()
        self.autonomous_changed.emit(False)

    def begin_reload(self) -> None:
        """A `plan/get` went out for the shown thread: hold events until `load`."""
        if self.thread_id is not None:
            self.loading = True

    def load(self, result: PlanGetResult) -> None:
        """Take in `plan/get` (activity already seen is kept), then replay held events."""
        if result.thread_id != self.thread_id:
            return
        activity = {key: node.activity for key, node in self._tasks.items()}
        self._plans, self._order, self._tasks = [], {}, {}
        for plan in result.plans:
            self._put_plan(plan, activity)
        self.loading = False
        self.set_error(None)
        self.set_autonomous(result.autonomous)
        held, self._held = self._held, []
        self.reset.emit()
        for params in held:
            self._apply_body(params.event)

    def fail_load(self, message: str) -> None:
        self.loading = False
        self._held = []
        self.set_error(message)

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
        """Take in one `run/event` of any thread; only the shown thread's coordinator events
        matter. Duplicates (a seq seen before) are dropped."""
        if params.thread_id != self.thread_id or not isinstance(
            params.event, PlanUpdate | TaskUpdate | SubagentEvent
        ):
            return
        last = self._last_seq.get(params.run_id)
        if last is not None and params.seq <= last:
            return
        self._last_seq[params.run_id] = params.seq
        if self.loading:
            self._held.append(params)
        else:
            self._apply_body(params.event)

    def _apply_body(self, event: RunEventBody) -> None:
        match event:
            case PlanUpdate(plan=plan):
                self._put_plan(plan, {})
                self.reset.emit()
            case TaskUpdate(task=task):
                self._put_task(task)
            case SubagentEvent():
                self._apply_subagent(event)
            case _:
                pass

    def _put_plan(self, plan: PlanInfo, activity: dict[TaskKey, ActivityLog]) -> None:
        for i, known in enumerate(self._plans):
            if known.id == plan.id:
                self._plans[i] = plan
                break
        else:
            self._plans.append(plan)
        order = [task.id for task in plan.tasks]
        for task_id in self._order.get(plan.id, []):
            if task_id not in order:
                self._tasks.pop((plan.id, task_id), None)
        self._order[plan.id] = order
        for task in plan.tasks:
            node = self._tasks.get((plan.id, task.id))
            if node is None:
                log = activity.get((plan.id, task.id)) or ActivityLog()
                self._tasks[(plan.id, task.id)] = TaskNode(task, log)
            else:
                node.info = task

    def _put_task(self, task: TaskInfo) -> None:
        key = (task.plan_id, task.id)
        node = self._tasks.get(key)
        if node is None:
            if task.plan_id not in self._order:
                if self.thread_id is not None:
                    self.resync_needed.emit(self.thread_id)
                return
            self._tasks[key] = TaskNode(task)
            self._order[task.plan_id].append(task.id)
            self.reset.emit()
            return
        if node.info == task:
            return
        node.info, node.error, node.error_code = task, None, None
        self.task_changed.emit(*key)

    def _apply_subagent(self, event: SubagentEvent) -> None:
        node = (
            self._tasks.get((event.plan_id, event.task_id))
            if event.plan_id is not None
            else self.find_task(event.task_id)
        )
        if node is None:
            return
        body: RunEventBody | TaskCheck
        try:
            body = (
                TaskCheck.model_validate(event.event)
                if event.event.get("type") == "check"
                else _EVENT_BODY.validate_python(event.event)
            )
        except ValidationError:
            return  # a shape this desktop does not know yet: nothing to show for it
        if node.activity.apply(body):
            self.activity_changed.emit(*node.key)
