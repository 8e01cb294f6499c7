"""The coordinator's live state: profile slots, dependency wake-ups, cancel handles, timings."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from sidecar.plans.coordinator import Coordinator, Timings
from sidecar.plans.profiles import Profile

BOUND = 5.0


def _profile(concurrency: int, profile_id: str = "worker") -> Profile:
    return Profile(id=profile_id, name="Worker", concurrency=concurrency)


class _Holders:
    """Holders of a profile's slots that stay inside until released."""

    def __init__(self, coordinator: Coordinator, profile: Profile) -> None:
        self.coordinator = coordinator
        self.profile = profile
        self.inside = 0
        self.entered = 0
        self.most_inside = 0
        self.release = anyio.Event()

    async def hold(self) -> None:
        async with self.coordinator.slot(self.profile):
            self.inside += 1
            self.entered += 1
            self.most_inside = max(self.most_inside, self.inside)
            try:
                await self.release.wait()
            finally:
                self.inside -= 1


def _attempt(coordinator: Coordinator, plan_id: str, task_id: str) -> asyncio.Task[None]:
    """A running attempt that only ends by being cancelled, registered with the coordinator."""

    async def never() -> None:
        await asyncio.Event().wait()

    task = asyncio.get_running_loop().create_task(never())
    coordinator.attempt_started(plan_id, task_id, task)
    return task


async def _cancelled(task: asyncio.Task[None]) -> bool:
    with anyio.fail_after(BOUND):
        await asyncio.wait([task])
    return task.cancelled()


@pytest.mark.anyio
async def test_a_profile_never_has_more_holders_than_its_concurrency() -> None:
    coordinator = Coordinator()
    holders = _Holders(coordinator, _profile(3))
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(holders.hold)
            await anyio.wait_all_tasks_blocked()
            assert holders.inside == 3
            assert coordinator.peak("worker") == 3
            holders.release.set()
    assert holders.entered == 10
    assert holders.inside == 0
    assert holders.most_inside == 3
    assert coordinator.peak("worker") == 3


@pytest.mark.anyio
async def test_slots_are_per_profile() -> None:
    coordinator = Coordinator()
    narrow = _Holders(coordinator, _profile(1, "narrow"))
    wide = _Holders(coordinator, _profile(4, "wide"))
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(narrow.hold)
                group.start_soon(wide.hold)
            await anyio.wait_all_tasks_blocked()
            assert (narrow.inside, wide.inside) == (1, 4)
            narrow.release.set()
            wide.release.set()
    assert (coordinator.peak("narrow"), coordinator.peak("wide")) == (1, 4)
    assert coordinator.peak("unused") == 0


@pytest.mark.anyio
async def test_a_slot_is_given_back_when_its_holder_fails() -> None:
    coordinator = Coordinator()
    profile = _profile(1)
    with pytest.raises(RuntimeError):
        async with coordinator.slot(profile):
            raise RuntimeError("attempt failed")
    with anyio.fail_after(BOUND):
        async with coordinator.slot(profile):
            pass
    assert coordinator.peak("worker") == 1


@pytest.mark.anyio
async def test_a_changed_concurrency_applies_once_the_profile_is_idle() -> None:
    coordinator = Coordinator()
    async with coordinator.slot(_profile(1)):
        pass
    holders = _Holders(coordinator, _profile(2))
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(holders.hold)
            await anyio.wait_all_tasks_blocked()
            assert holders.inside == 2
            holders.release.set()


@pytest.mark.anyio
async def test_notify_wakes_a_waiter_of_the_plan() -> None:
    coordinator = Coordinator()
    woken = anyio.Event()

    async def waiter() -> None:
        await coordinator.wait_change("p1")
        woken.set()

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            coordinator.notify("p2")
            await anyio.wait_all_tasks_blocked()
            assert not woken.is_set()
            coordinator.notify("p1")
            await woken.wait()


@pytest.mark.anyio
async def test_notify_wakes_every_waiter_of_the_plan_and_later_waits_need_a_new_notify() -> None:
    coordinator = Coordinator()
    woken: list[int] = []

    async def waiter(n: int) -> None:
        await coordinator.wait_change("p1")
        woken.append(n)

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter, 1)
            group.start_soon(waiter, 2)
            await anyio.wait_all_tasks_blocked()
            coordinator.notify("p1")
        assert sorted(woken) == [1, 2]
        async with anyio.create_task_group() as group:
            group.start_soon(waiter, 3)
            await anyio.wait_all_tasks_blocked()
            assert len(woken) == 2
            coordinator.notify("p1")
    assert sorted(woken) == [1, 2, 3]


@pytest.mark.anyio
async def test_cancel_task_cancels_the_running_attempt_and_is_taken_once() -> None:
    coordinator = Coordinator()
    attempt = _attempt(coordinator, "p1", "a")
    other = _attempt(coordinator, "p1", "b")
    assert coordinator.cancel_task("p1", "a") is True
    assert await _cancelled(attempt)
    assert not other.done()
    assert coordinator.take_cancel("p1", "a") is True
    assert coordinator.take_cancel("p1", "a") is False
    assert coordinator.take_cancel("p1", "b") is False
    other.cancel()
    assert await _cancelled(other)


@pytest.mark.anyio
async def test_cancel_task_without_a_running_attempt_is_refused() -> None:
    coordinator = Coordinator()
    assert coordinator.cancel_task("p1", "a") is False
    attempt = _attempt(coordinator, "p1", "a")
    attempt.cancel()
    assert await _cancelled(attempt)
    assert coordinator.cancel_task("p1", "a") is False
    coordinator.attempt_ended("p1", "a")
    assert coordinator.cancel_task("p1", "a") is False
    assert coordinator.take_cancel("p1", "a") is False


@pytest.mark.anyio
async def test_cancel_pending_is_taken_once_and_wakes_the_plan() -> None:
    coordinator = Coordinator()
    woken = anyio.Event()

    async def waiter() -> None:
        await coordinator.wait_change("p1")
        woken.set()

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            coordinator.cancel_pending("p1", "a")
            await woken.wait()
    assert coordinator.take_cancel("p1", "a") is True
    assert coordinator.take_cancel("p1", "a") is False


@pytest.mark.anyio
async def test_abort_plan_cancels_its_running_attempts_only() -> None:
    coordinator = Coordinator()
    first = _attempt(coordinator, "p1", "a")
    second = _attempt(coordinator, "p1", "b")
    elsewhere = _attempt(coordinator, "p2", "a")
    assert not coordinator.aborted("p1")
    coordinator.abort_plan("p1")
    assert coordinator.aborted("p1")
    assert not coordinator.aborted("p2")
    assert await _cancelled(first)
    assert await _cancelled(second)
    assert not elsewhere.done()
    assert coordinator.take_cancel("p1", "a") is True
    assert coordinator.take_cancel("p1", "b") is True
    assert coordinator.take_cancel("p2", "a") is False
    elsewhere.cancel()
    assert await _cancelled(elsewhere)


@pytest.mark.anyio
async def test_abort_plan_wakes_waiters_and_forget_plan_clears_it() -> None:
    coordinator = Coordinator()
    woken = anyio.Event()

    async def waiter() -> None:
        await coordinator.wait_change("p1")
        woken.set()

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            coordinator.abort_plan("p1")
            await woken.wait()
    coordinator.forget_plan("p1")
    assert not coordinator.aborted("p1")


def test_backoff_doubles_from_the_base_and_is_capped() -> None:
    timings = Timings(backoff_base=1.0, backoff_cap=30.0)
    assert [timings.backoff(n) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert timings.backoff(0) == 1.0
    assert timings.backoff(100) == 30.0


def test_backoff_follows_shortened_test_timings() -> None:
    timings = Timings(backoff_base=0.01, backoff_cap=0.05)
    assert [timings.backoff(n) for n in (1, 2, 3, 4)] == [0.01, 0.02, 0.04, 0.05]
