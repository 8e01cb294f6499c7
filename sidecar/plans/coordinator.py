"""What is alive of the running plans, in this process: profile slots, dependency wake-ups and
per-task cancel handles. Everything durable (task states, results) is in the store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from sidecar.plans.profiles import Profile


@dataclass(frozen=True, slots=True)
class Timings:
    """Delays of the coordinator (tests shorten them)."""

    backoff_base: float = 1.0
    backoff_cap: float = 30.0
    continuation_delay: float = 0.5
    max_continuations: int = 5
    max_steps: int = 25

    def backoff(self, attempt: int) -> float:
        """Delay before attempt `attempt + 1` after a failure: exponential, capped."""
        return min(self.backoff_cap, self.backoff_base * 2 ** max(0, attempt - 1))


@dataclass(eq=False)
class _Slots:
    size: int
    semaphore: asyncio.Semaphore
    running: int = 0
    peak: int = 0


@dataclass(eq=False)
class Coordinator:
    timings: Timings = field(default_factory=Timings)
    _slots: dict[str, _Slots] = field(default_factory=dict[str, _Slots])
    _changed: dict[str, asyncio.Event] = field(default_factory=dict[str, asyncio.Event])
    _attempts: dict[tuple[str, str], asyncio.Task[object]] = field(
        default_factory=dict[tuple[str, str], "asyncio.Task[object]"]
    )
    _cancelled: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    _aborted: set[str] = field(default_factory=set[str])
    _held: set[str] = field(default_factory=set[str])
    _agent_runs: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])
    missing_providers: dict[str, str] = field(default_factory=dict[str, str])
    """The strong agents' CLIs the agents server last reported missing (provider → how to
    install it): the roster's availability."""

    @asynccontextmanager
    async def slot(self, profile: Profile) -> AsyncGenerator[None]:
        """Hold one of the profile's `concurrency` run slots (shared by every plan)."""
        slots = self._slots.get(profile.id)
        if slots is None or (slots.size != profile.concurrency and slots.running == 0):
            slots = self._slots[profile.id] = _Slots(
                profile.concurrency, asyncio.Semaphore(profile.concurrency)
            )
        async with slots.semaphore:
            slots.running += 1
            slots.peak = max(slots.peak, slots.running)
            try:
                yield
            finally:
                slots.running -= 1

    def running(self, profile_id: str) -> int:
        """The profile's runs holding a slot now."""
        slots = self._slots.get(profile_id)
        return slots.running if slots is not None else 0

    def peak(self, profile_id: str) -> int:
        """The most runs of the profile that held a slot at once since this process started."""
        slots = self._slots.get(profile_id)
        return slots.peak if slots is not None else 0

    def notify(self, plan_id: str) -> None:
        """A task of the plan changed: wake whoever waits on its dependencies."""
        event = self._changed.pop(plan_id, None)
        if event is not None:
            event.set()

    async def wait_change(self, plan_id: str) -> None:
        event = self._changed.setdefault(plan_id, asyncio.Event())
        await event.wait()

    def attempt_started(self, plan_id: str, task_id: str, task: asyncio.Task[object]) -> None:
        self._attempts[(plan_id, task_id)] = task

    def attempt_ended(self, plan_id: str, task_id: str) -> None:
        self._attempts.pop((plan_id, task_id), None)

    def agent_run_started(self, plan_id: str, task_id: str, run_id: str) -> None:
        """A strong agent's run (the agents server's id) works on the task now."""
        self._agent_runs[(plan_id, task_id)] = run_id

    def agent_run_ended(self, plan_id: str, task_id: str) -> None:
        self._agent_runs.pop((plan_id, task_id), None)

    def agent_run(self, plan_id: str, task_id: str) -> str | None:
        """The agents server's id of the strong agent's run working on the task, if any."""
        return self._agent_runs.get((plan_id, task_id))

    def cancel_task(self, plan_id: str, task_id: str) -> bool:
        """Stop the task's current attempt on the author's word; False if none is running."""
        attempt = self._attempts.get((plan_id, task_id))
        if attempt is None or attempt.done():
            return False
        self._cancelled.add((plan_id, task_id))
        attempt.cancel()
        return True

    def cancel_pending(self, plan_id: str, task_id: str) -> None:
        """Cancel a task that has not started yet (waiting for dependencies or a slot)."""
        self._cancelled.add((plan_id, task_id))
        self.notify(plan_id)

    def take_cancel(self, plan_id: str, task_id: str) -> bool:
        """Whether the author cancelled this task (consumed once)."""
        key = (plan_id, task_id)
        if key in self._cancelled:
            self._cancelled.discard(key)
            return True
        return False

    def abort_plan(self, plan_id: str) -> None:
        """Stop every running task of the plan; tasks not started yet see `aborted`."""
        self._aborted.add(plan_id)
        for (pid, tid), attempt in list(self._attempts.items()):
            if pid == plan_id and not attempt.done():
                self._cancelled.add((pid, tid))
                attempt.cancel()
        self.notify(plan_id)

    def aborted(self, plan_id: str) -> bool:
        return plan_id in self._aborted

    def hold(self, plan_id: str) -> None:
        """The plan's work stops to be taken up again (paused, or the sidecar stops): its
        attempts' isolated copies are kept for the agents to go on in."""
        self._held.add(plan_id)

    def release(self, plan_id: str) -> None:
        self._held.discard(plan_id)

    def held(self, plan_id: str) -> bool:
        return plan_id in self._held

    def forget_plan(self, plan_id: str) -> None:
        self._aborted.discard(plan_id)
        self._held.discard(plan_id)
        self._changed.pop(plan_id, None)
