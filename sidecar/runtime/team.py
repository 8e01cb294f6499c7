"""Delegated work runs in the background of its thread, and its results come back by themselves.

A plan the author's agent hands off (`atrium__delegate`, `atrium__plan`) is approved inside the
turn, then given to the `TeamDesk`: the turn's tool call returns at once with the plan's and its
tasks' ids, the turn ends normally, and the author keeps talking with the main agent. The desk
runs the plan's open tasks exactly as the dispatch fan-out did (the coordinator's caps, the
subagent lane, approvals, the review gate, budgets, escalations: `sidecar.plans.runner`), under a
run of its own on the thread (kind `plan`): its events are `run/event`s marked `background`, its
questions are live interrupts of that run, in the same inbox as the author's others.

When the plan ends, its report is announced into the thread through the message queue, in the
same transaction that records the plan's end: steered into the running turn if the main agent is
working, else a new turn; results that end close together are taken in one turn. The queue's
delivery is exactly once across crashes, and the announcement's id is the plan's and its
run's, so it is never written twice. A plan a crash left running is taken up again at
start-up (`resume_all`): its finished tasks stay finished, its open ones run again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable

from sidecar.binding.calls import bind_run
from sidecar.plans.coordinator import Coordinator
from sidecar.plans.deps import PlanDeps
from sidecar.plans.records import emit_plan
from sidecar.plans.report import plan_outcome, plan_report
from sidecar.protocol import (
    ANNOUNCEMENT_PREFIX,
    ErrorInfo,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
)
from sidecar.runtime.drive import forward_event
from sidecar.runtime.emitter import EventSink, RunEmitter
from sidecar.runtime.live import LiveInterrupts
from sidecar.runtime.queueing import ANNOUNCEMENT_ID_PREFIX
from sidecar.runtime.recovery import PLAN_RUN
from sidecar.store import Store
from sidecar.turn.events import events_to
from sidecar.turn.state import SubagentInput

log = logging.getLogger(__name__)


def announcement_id(plan_id: str, run_id: str) -> str:
    """The queued message that announces the end of the plan's background run: one per run
    (a crash before the plan's end was recorded runs it again under a new run, which
    announces instead; a crash after finds it ended and queued)."""
    return f"{ANNOUNCEMENT_ID_PREFIX}{plan_id}:{run_id}"


class TeamDesk:
    """The plans running in the background of their threads, in this process."""

    def __init__(
        self,
        store: Store,
        sink: EventSink,
        live: LiveInterrupts,
        deps: Callable[[], Awaitable[PlanDeps]],
        deliver: Callable[[str], Awaitable[None]],
    ) -> None:
        self._store = store
        self._sink = sink
        self._live = live
        self._deps = deps
        self._deliver = deliver
        self._running: dict[str, tuple[str, asyncio.Task[None]]] = {}

    def start(self, thread_id: str, plan_id: str) -> str:
        """Run the plan's open tasks in the background; returns the id of the run that does
        (the one already doing it, if the plan runs here already)."""
        running = self._running.get(plan_id)
        if running is not None and not running[1].done():
            return running[0]
        run_id = uuid.uuid4().hex
        with self._store.transaction():
            self._store.create_run(run_id, thread_id, PLAN_RUN)
        task = asyncio.ensure_future(self._run(thread_id, plan_id, run_id))
        self._running[plan_id] = (run_id, task)
        task.add_done_callback(lambda done: self._ended(plan_id, done))
        return run_id

    async def plan_deps(self) -> PlanDeps:
        """What the plans run with (the graph's deps, built with the graph)."""
        return await self._deps()

    def is_running(self, plan_id: str) -> bool:
        running = self._running.get(plan_id)
        return running is not None and not running[1].done()

    def resume_all(self) -> list[str]:
        """Take up every background plan a crash (or a shutdown) left running; returns their
        ids. Plans of sub-threads are not here: their parent task runs them again itself."""
        resumed: list[str] = []
        for plan in self._store.plans_in_status("running"):
            thread = self._store.get_thread(plan.thread_id)
            if thread.parent_id is None:
                self.start(plan.thread_id, plan.id)
                resumed.append(plan.id)
        return resumed

    async def pause(self, plan_id: str) -> None:
        """Stop the plan's work where it is, to be taken up by `start` (plan/resume): its
        agents are stopped, its tasks keep their state, sessions and isolated copies, and its
        background run ends as cancelled. The caller records the plan as paused first (a
        paused plan is not taken up at start-up)."""
        await self._stop([plan_id])

    async def aclose(self) -> None:
        """Stop every background plan (its tasks are taken up again at the next start)."""
        await self._stop(list(self._running))

    async def _stop(self, plan_ids: list[str]) -> None:
        deps = await self._deps() if plan_ids else None
        stopping: list[asyncio.Task[None]] = []
        for plan_id in plan_ids:
            running = self._running.get(plan_id)
            if running is None or running[1].done():
                continue
            if deps is not None:
                deps.coordinator.hold(plan_id)
            running[1].cancel()
            stopping.append(running[1])
        for task in stopping:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, thread_id: str, plan_id: str, run_id: str) -> None:
        """The background run: `run_started`, the tasks' events and questions, then
        `run_finished` once the plan's end is recorded (or `run_cancelled` when the sidecar
        stops first, `run_failed` if the desk itself fails: the plan is taken up again at the
        next start either way)."""
        emit = RunEmitter(self._store, self._sink, run_id, thread_id, background=True)
        emit(RunStarted())
        status, final = "failed", None
        try:
            deps = await self._deps()
            deps.coordinator.release(plan_id)
            with bind_run(self._live.binding(emit)), events_to(lambda e: forward_event(emit, e)):
                await _run_open_tasks(deps, thread_id, plan_id)
                self._finish(deps.coordinator, thread_id, plan_id, run_id)
            status, final = "finished", RunFinished()
        except asyncio.CancelledError:
            status, final = "cancelled", RunCancelled()
            raise
        except Exception as exc:  # the boundary of a background job: logged, reported, kept
            log.exception("background plan %s failed", plan_id)
            final = RunFailed(error=ErrorInfo(code="internal", message=str(exc)))
        finally:
            self._live.end_run(run_id)
            self._store.end_run(run_id, status)
            if final is not None:
                emit(final)
            emit.flush()
        await self._deliver(thread_id)

    def _finish(self, coordinator: Coordinator, thread_id: str, plan_id: str, run_id: str) -> None:
        """Record the plan's end and queue its announcement, in one transaction."""
        store = self._store
        plan = store.get_plan(plan_id)
        if plan is None:
            return
        tasks = store.tasks(plan_id)
        status = plan_outcome(tasks, aborted=coordinator.aborted(plan_id))
        text = plan_report(store, plan, status, tasks)
        with store.transaction():
            store.set_plan_status(plan_id, status)
            store.queue.enqueue(
                thread_id,
                "steer",
                f"{ANNOUNCEMENT_PREFIX}{plan_id} ended: {status}]\n{text}",
                "main",
                message_id=announcement_id(plan_id, run_id),
            )
            for envelope in store.unacked_envelopes(thread_id, plan_id):
                store.ack_envelope(envelope.id)
        coordinator.forget_plan(plan_id)
        emit_plan(store, plan_id)

    def _ended(self, plan_id: str, task: asyncio.Task[None]) -> None:
        running = self._running.get(plan_id)
        if running is not None and running[1] is task:
            del self._running[plan_id]


async def _run_open_tasks(deps: PlanDeps, thread_id: str, plan_id: str) -> None:
    """Every open task of the plan at once (each waits for its dependencies and its slot),
    until none is open: a task the author retries meanwhile is taken up too. A round that
    changed no open task ends it (the plan's end then reports them as they stand)."""
    # The runner imports LangGraph (interrupts): imported here, when the graph is built, so
    # start-up does not pay for it (tests/sidecar/test_app_imports.py).
    from sidecar.plans.runner import run_task

    seen: set[tuple[str, int]] = set()
    while open_tasks := [t for t in deps.store.tasks(plan_id) if not t.final]:
        now = {(t.id, t.version) for t in open_tasks}
        if now <= seen:  # (an aborted plan's open tasks end as cancelled in their round)
            return
        seen |= now
        await asyncio.gather(
            *(
                run_task(
                    deps,
                    SubagentInput(thread_id=thread_id, plan_id=plan_id, task_id=t.id, depth=1),
                )
                for t in open_tasks
            )
        )
