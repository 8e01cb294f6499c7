"""The life of one task inside the dispatch fan-out: wait for its dependencies, take a slot of
its profile, run attempts until it succeeds or the author decides, and leave its result in the
outbox.

Continuation vs retry: an attempt that ends cleanly with work left continues the same session
after a short delay (not counted as an attempt); a failure is retried with exponential backoff
up to the profile's `max_attempts`. An attempt with no event for `stall_seconds` (time spent
waiting on the author does not count) is stopped and handled as a failure, with the task's
stall badge set. When attempts run out the author is asked (escalation: retry, reassign, skip,
abort the plan) unless the thread is autonomous; then the task fails, which is a replanning
trigger for the planner.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Generator
from contextlib import AbstractAsyncContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import Any, Literal, cast

from sidecar.binding.calls import LiveInterruptDropped, task_scope
from sidecar.llm.types import PlannerError
from sidecar.plans.attempt import (
    AttemptContext,
    AttemptMode,
    AttemptReport,
    AttemptResult,
    BudgetExceededError,
    FailureClass,
)
from sidecar.plans.deps import PlanDeps
from sidecar.plans.escalation import ask_author, out_of_attempts
from sidecar.plans.finish import finish_task
from sidecar.plans.internal import internal_attempt
from sidecar.plans.plan_budget import budget_spent, charge, cut_reason, is_spent
from sidecar.plans.profiles import Profile
from sidecar.plans.records import change_task, post_envelope
from sidecar.plans.report import RESUMED
from sidecar.plans.skill_composer import composer_attempt, is_composer
from sidecar.plans.strong import resumption, strong_attempt
from sidecar.plans.verify import CHECK_FAILED, check_result
from sidecar.store import TaskRecord
from sidecar.turn.events import SubagentRelayed, emit
from sidecar.turn.questions import Question
from sidecar.turn.state import SubagentInput

log = logging.getLogger(__name__)

_OK_DEPENDENCY = frozenset({"succeeded", "skipped"})
_BLOCKING = frozenset({"failed", "cancelled"})
_REPORT_EVERY = 1.0


async def run_task(deps: PlanDeps, inp: SubagentInput) -> None:
    store = deps.store
    plan_id, task_id = inp["plan_id"], inp["task_id"]
    task = store.get_task(plan_id, task_id)
    if task is None or task.final:
        return
    with task_scope(task_id):
        blocker = await _wait_for_dependencies(deps, task)
        if blocker is not None:
            finish_task(deps, inp, task, "cancelled", error=blocker)
            return
        profile = deps.profiles().get(task.profile)
        if profile is None:
            finish_task(deps, inp, task, "failed", error=f"unknown profile {task.profile!r}")
            return
        async with deps.coordinator.slot(profile), _subagent_lane(deps, inp["depth"]):
            if deps.coordinator.take_cancel(plan_id, task_id):
                finish_task(deps, inp, task, "cancelled", error="cancelled by the author")
            elif task.status == "pending" and (cut := cut_reason(deps, task)):
                finish_task(deps, inp, task, "skipped", error=cut)
            else:
                await _attempts(deps, inp, task, profile)
        deps.coordinator.notify(plan_id)


def _note_resumed(deps: PlanDeps, inp: SubagentInput, task: TaskRecord, profile: Profile) -> None:
    """Say how a task left running (by a stopped sidecar, or a paused plan) is taken up: an
    observation in the plan's outbox (the report and `task/envelopes` show it) and the task's
    activity."""
    how = (
        "it goes on from its last checkpoint"
        if profile.kind == "internal"
        else resumption(task, profile)
    )
    post_envelope(deps.store, task, inp["thread_id"], kind="observation", payload={RESUMED: how})
    change_task(deps.store, task.plan_id, task.id, activity=f"taken up again: {how}")


def _subagent_lane(deps: PlanDeps, depth: int) -> AbstractAsyncContextManager[None]:
    """A slot of the runtime's `subagent` lane for a task of the author's own turn; a nested
    task runs in its parent's slot (waiting for a second one could wait forever)."""
    if depth > 1:
        return nullcontext()
    return deps.lane("subagent")


async def _wait_for_dependencies(deps: PlanDeps, task: TaskRecord) -> str | None:
    """None once every dependency succeeded (or was skipped); else why the task cannot run."""
    while True:
        if deps.coordinator.aborted(task.plan_id):
            return "not run: the plan was aborted"
        if deps.coordinator.take_cancel(task.plan_id, task.id):
            return "cancelled by the author"
        states = {d: deps.store.get_task(task.plan_id, d) for d in task.depends_on}
        for dep_id, dep in states.items():
            if dep is None or dep.status in _BLOCKING:
                return f"not run: dependency {dep_id!r} did not succeed"
        if all(dep is not None and dep.status in _OK_DEPENDENCY for dep in states.values()):
            return None
        await deps.coordinator.wait_change(task.plan_id)


async def _attempts(deps: PlanDeps, inp: SubagentInput, task: TaskRecord, profile: Profile) -> None:
    timings = deps.coordinator.timings
    mode: AttemptMode = "resume" if task.status in ("running", "waiting") else "start"
    attempt = task.attempt if mode == "resume" else 0
    if mode == "resume":
        _note_resumed(deps, inp, task, profile)
    continuations = 0
    error: str | None = None
    while True:
        if mode not in {"resume", "continue"}:
            attempt += 1
        current = change_task(
            deps.store,
            task.plan_id,
            task.id,
            status="running",
            attempt=max(attempt, 1),
            started_at=task.started_at or time.time(),
            last_event_at=time.time(),
            stalled=False,
            activity="starting",
        )
        if current is None:
            return  # ended by the author meanwhile
        result, stopped = await _one_attempt(
            deps, inp, current, profile, mode=mode, previous_error=error
        )
        current = _add_usage(deps, current, result)
        over = _over_budget(profile, current)
        if over is not None and result.status != "success" and stopped != "cancelled":
            result = AttemptResult(
                status="failed",
                error=over,
                summary=result.summary,
                artifacts=result.artifacts,
                session_ref=result.session_ref,
            )
            stopped = "budget"
        settled = await _settle(deps, inp, current, result, stopped)
        if settled is None:
            return
        if settled == "continue":
            mode, task = "continue", _reload(deps, current)
            continue
        result = settled
        if result.status == "incomplete" and continuations < timings.max_continuations:
            continuations += 1
            if result.session_ref:
                change_task(deps.store, task.plan_id, task.id, session_ref=result.session_ref)
            await asyncio.sleep(timings.continuation_delay)
            mode, task = "continue", _reload(deps, current)
            continue
        error = result.error or "ended with work left after every continuation"
        log.info("task %s.%s attempt %d failed: %s", task.plan_id, task.id, attempt, error)
        retryable = stopped != "budget" and result.failure != "hopeless"
        if attempt < profile.max_attempts and retryable:
            await asyncio.sleep(result.retry_after or timings.backoff(attempt))
            mode, task = _next_mode(profile, result), _reload(deps, current)
            continue
        next_profile = await out_of_attempts(
            deps, inp, current, profile, stopped=stopped or "failed", result=result
        )
        if next_profile is None:
            return
        profile = next_profile
        attempt, mode, task = 0, "retry", _reload(deps, current)


async def _settle(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    result: AttemptResult,
    stopped: str | None,
) -> AttemptResult | Literal["continue"] | None:
    """What an ended attempt comes to: None once the task has ended (cancelled, stopped by the
    plan's budget, or succeeded and passed its check); `continue` when the author raised the
    plan's budget; else the result to retry (a failed check becomes a failure with its
    reasons, not a blind retry)."""
    if stopped == "cancelled":
        reason = "aborted with the plan" if deps.coordinator.aborted(task.plan_id) else None
        finish_task(deps, inp, task, "cancelled", error=reason or "cancelled by the author")
        return None
    if stopped == "budget" and is_spent(result.error):
        return "continue" if await budget_spent(deps, inp, task) else None
    if result.status != "success":
        return result
    verdict = await check_result(deps, inp, task, result)
    if verdict is None or verdict.passed:
        finish_task(deps, inp, task, "succeeded", result=result)
        return None
    if verdict.task_wrong:  # no revision can pass it: the task fails, the plan must change
        finish_task(deps, inp, task, "failed", error=verdict.feedback(), result=result)
        return None
    return replace(result, status="failed", error=verdict.feedback())


def _next_mode(profile: Profile, result: AttemptResult) -> AttemptMode:
    """A result that failed its check is revised in the same session (an internal agent);
    a strong agent starts afresh with the check's reasons in its instruction."""
    checked = result.error is not None and result.error.startswith(CHECK_FAILED)
    return "revise" if checked and profile.kind == "internal" else "retry"


def _add_usage(deps: PlanDeps, task: TaskRecord, result: AttemptResult) -> TaskRecord:
    """Every attempt's tokens and cost count towards the task (and its budget)."""
    if not (result.tokens_in or result.tokens_out or result.cost):
        return task
    updated = change_task(
        deps.store,
        task.plan_id,
        task.id,
        tokens_in=task.tokens_in + result.tokens_in,
        tokens_out=task.tokens_out + result.tokens_out,
        cost=task.cost + result.cost,
    )
    return updated or task


def _over_budget(profile: Profile, task: TaskRecord) -> str | None:
    tokens = task.tokens_in + task.tokens_out
    if profile.budget_tokens is not None and tokens > profile.budget_tokens:
        return f"token budget exceeded: {tokens} > {profile.budget_tokens}"
    if profile.budget_cost is not None and task.cost > profile.budget_cost:
        return f"cost budget exceeded: {task.cost:.4f} > {profile.budget_cost:.4f}"
    return None


def _reload(deps: PlanDeps, task: TaskRecord) -> TaskRecord:
    return deps.store.get_task(task.plan_id, task.id) or task


async def _one_attempt(
    deps: PlanDeps,
    inp: SubagentInput,
    task: TaskRecord,
    profile: Profile,
    *,
    mode: AttemptMode,
    previous_error: str | None,
) -> tuple[AttemptResult, str | None]:
    """Run one attempt under the stall watchdog and the profile's timeout. The second value
    says why it was stopped: `cancelled`, `stalled`, `budget`, or None (it ended itself)."""
    activity = asyncio.Event()
    waiting = [0]
    reporter = _Reporter(deps, task, activity)
    clock = AttemptClock(profile.timeout)

    async def ask(payload: Question) -> dict[str, Any]:
        waiting[0] += 1
        change_task(deps.store, task.plan_id, task.id, status="waiting", activity="waiting for you")
        try:
            with clock.paused():  # the author's time is not the attempt's
                return await ask_author(payload, task)
        finally:
            waiting[0] -= 1
            change_task(deps.store, task.plan_id, task.id, status="running", activity="working")
            activity.set()

    ctx = AttemptContext(
        inp["thread_id"], task, profile, inp["depth"], mode, previous_error, reporter, ask
    )
    if profile.kind == "internal":
        body = (composer_attempt if is_composer(profile.id) else internal_attempt)(deps, ctx)
    else:
        body = strong_attempt(deps, ctx)
    runner: asyncio.Task[AttemptResult] = asyncio.ensure_future(clock.run(body))
    deps.coordinator.attempt_started(task.plan_id, task.id, cast("asyncio.Task[object]", runner))

    def failed(error: str) -> AttemptResult:
        # What the attempt used before it stopped still counts.
        return AttemptResult(
            status="failed",
            error=error,
            tokens_in=ctx.tokens_in,
            tokens_out=ctx.tokens_out,
            cost=ctx.cost,
        )

    try:
        stalled = await _watch(runner, activity, waiting, profile.stall_seconds)
        if stalled:
            runner.cancel()
        try:
            return await runner, None
        except asyncio.CancelledError:
            if deps.coordinator.take_cancel(task.plan_id, task.id):
                return failed("cancelled"), "cancelled"
            if stalled:
                change_task(deps.store, task.plan_id, task.id, stalled=True)
                return failed(f"stalled: no event in {int(profile.stall_seconds)}s"), "stalled"
            raise
        except BudgetExceededError as exc:
            return failed(str(exc)), "budget"
        except LiveInterruptDropped:
            raise
        except PlannerError as exc:  # an internal agent's model: its headline, and its class
            return replace(failed(str(exc)), failure=model_failure(exc.code)), None
        except Exception as exc:  # the attempt boundary: any failure is a retry, never lost
            return failed(f"{type(exc).__name__}: {exc}"), None
    finally:
        if not runner.done():
            runner.cancel()
        deps.coordinator.attempt_ended(task.plan_id, task.id)


_HOPELESS_MODEL_ERRORS = frozenset({"no_key", "auth", "context_window"})


def model_failure(code: str) -> FailureClass:
    """The class of an internal agent's model error (`sidecar.llm` codes): no key or a refused
    one, or a task too large for the model's window, cannot be mended by trying again."""
    if code in _HOPELESS_MODEL_ERRORS:
        return "hopeless"
    return "rate_limited" if code == "rate_limited" else "transient"


class AttemptClock:
    """An attempt's time limit, stopped while the author is asked: a question or a changeset
    review left open (the agent's changes are ready) never runs the attempt out of time, and
    the attempt gets the rest of its time once the answer comes."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._timeout: asyncio.Timeout | None = None
        self._paused = 0
        self._left = limit

    async def run(self, body: Awaitable[AttemptResult]) -> AttemptResult:
        try:
            async with asyncio.timeout(self.limit) as timeout:
                self._timeout = timeout
                return await body
        except TimeoutError:
            return AttemptResult(status="failed", error=f"timed out after {int(self.limit)}s")

    @contextmanager
    def paused(self) -> Generator[None]:
        loop = asyncio.get_running_loop()
        timeout = self._timeout
        if timeout is not None and self._paused == 0 and (when := timeout.when()) is not None:
            self._left = max(0.0, when - loop.time())
            timeout.reschedule(None)
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
            if timeout is not None and self._paused == 0 and not timeout.expired():
                timeout.reschedule(loop.time() + self._left)


async def _watch(
    runner: asyncio.Task[AttemptResult], activity: asyncio.Event, waiting: list[int], stall: float
) -> bool:
    """Wait for the attempt to end; True if it went `stall` seconds without an event while
    not waiting on the author."""
    while not runner.done():
        activity.clear()
        tick = asyncio.ensure_future(activity.wait())
        try:
            done, _ = await asyncio.wait(
                {runner, tick}, timeout=stall, return_when="FIRST_COMPLETED"
            )
        finally:
            tick.cancel()
        if not done and waiting[0] == 0:
            return True
    return False


class _Reporter:
    """Turns an attempt's reports into stall-clock resets, nested events and (at most once a
    second) task updates with the current activity and usage."""

    def __init__(self, deps: PlanDeps, task: TaskRecord, activity: asyncio.Event) -> None:
        self._deps, self._task, self._activity = deps, task, activity
        self._last_write = 0.0
        self._activity_text: str | None = None

    def __call__(self, report: AttemptReport) -> None:
        if not report.heartbeat:
            self._activity.set()
        if report.usage is not None:
            charge(self._deps, self._task, report.usage.tokens, report.usage.cost)
        if report.event is not None:
            emit(
                SubagentRelayed(
                    task_id=self._task.id,
                    plan_id=self._task.plan_id,
                    sub_thread_id=report.sub_thread_id,
                    event=report.event,
                )
            )
        if report.heartbeat:
            return  # neither activity nor a sign of it: the task's last event stays as it was
        text = report.activity
        changed = text is not None and text != self._activity_text
        now = time.time()
        if changed or now - self._last_write >= _REPORT_EVERY:
            self._activity_text = text or self._activity_text
            self._last_write = now
            change_task(
                self._deps.store,
                self._task.plan_id,
                self._task.id,
                activity=self._activity_text,
                last_event_at=now,
            )
