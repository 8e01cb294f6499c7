"""Lanes: each lane's cap holds, a full lane never delays another, slots come back on cancel."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.runtime.lanes import Lanes, UnknownLaneError
from tests.sidecar.runtime import test_queueing
from tests.sidecar.runtime.scripted import Gate, answer
from tests.sidecar.runtime.test_queueing import QueueRig

pytestmark = pytest.mark.anyio

qrig = test_queueing.qrig  # the in-process runtime with its queue


async def test_a_lane_never_runs_more_than_its_cap_and_a_raised_cap_wakes_the_waiters():
    caps = {"main": 2, "subagent": 8, "cron": 1}
    lanes = Lanes(lambda: caps)
    peak = 0
    release = asyncio.Event()

    async def job() -> None:
        nonlocal peak
        async with lanes.slot("main"):
            peak = max(peak, lanes.running("main"))
            await release.wait()

    jobs = [asyncio.ensure_future(job()) for _ in range(5)]
    for _ in range(10):
        await asyncio.sleep(0)
    assert (lanes.running("main"), lanes.waiting("main")) == (2, 3)
    caps["main"] = 4
    await lanes.caps_changed()
    for _ in range(10):
        await asyncio.sleep(0)
    assert (lanes.running("main"), lanes.waiting("main")) == (4, 1)
    release.set()
    await asyncio.gather(*jobs)
    assert peak == 4 and lanes.running("main") == 0


async def test_a_full_cron_lane_does_not_hold_up_main_and_a_cancelled_waiter_leaves_no_slot():
    lanes = Lanes()
    hold = asyncio.Event()

    async def cron_job() -> None:
        async with lanes.slot("cron"):
            await hold.wait()

    first = asyncio.ensure_future(cron_job())
    second = asyncio.ensure_future(cron_job())
    for _ in range(5):
        await asyncio.sleep(0)
    assert lanes.waiting("cron") == 1
    async with asyncio.timeout(5), lanes.slot("main"):
        assert lanes.running("main") == 1
    second.cancel()
    await asyncio.gather(second, return_exceptions=True)
    assert lanes.waiting("cron") == 0
    hold.set()
    await first
    assert lanes.running("cron") == 0
    with pytest.raises(UnknownLaneError, match="lanes are main, subagent, cron"):
        async with lanes.slot("batch"):
            pass


async def test_the_authors_turn_runs_while_scheduled_turns_queue_in_the_cron_lane(
    qrig: QueueRig,
):
    store, runs = qrig.rig.store, qrig.rig.runs
    gate = Gate()
    qrig.rig.planner.script += [gate, answer("author answered"), answer("cron 1"), answer("cron 2")]
    cron_a, cron_b, author = (store.create_thread(n) for n in ("a", "b", "author"))
    first = await runs.start(cron_a.id, "scheduled one", lane="cron")
    await gate.entered.wait()
    second = await runs.start(cron_b.id, "scheduled two", lane="cron")
    mine = await runs.start(author.id, "my own question")
    await qrig.rig.finish(mine)
    assert runs.lanes.waiting("cron") == 1 and qrig.rig.types(second) == []
    gate.release.set()
    await qrig.rig.finish(first)
    await qrig.rig.finish(second)
    assert qrig.started.index(mine) < qrig.started.index(second)


async def test_a_scheduled_prompt_queued_behind_a_busy_thread_still_runs_in_the_cron_lane(
    qrig: QueueRig,
):
    store, runs = qrig.rig.store, qrig.rig.runs
    busy, held = Gate(), Gate()
    qrig.rig.planner.script += [busy, answer("author answered"), held, answer("reminder done")]
    thread = store.create_thread("t")
    mine, _ = await qrig.desk.submit(thread.id, "my own question")
    await busy.entered.wait()
    _, queued = await qrig.desk.submit(thread.id, "the 9 o'clock reminder", "followup", lane="cron")
    assert queued is not None
    busy.release.set()
    await qrig.rig.finish(mine)
    await held.entered.wait()  # the queued prompt's turn is running now
    assert (runs.lanes.running("cron"), runs.lanes.running("main")) == (1, 0)
    held.release.set()
    await qrig.settle(thread.id)


async def test_a_batch_with_one_message_of_the_author_runs_in_the_main_lane(qrig: QueueRig):
    store, runs = qrig.rig.store, qrig.rig.runs
    busy, held = Gate(), Gate()
    qrig.rig.planner.script += [busy, answer("first"), held, answer("both")]
    thread = store.create_thread("t")
    first, _ = await qrig.desk.submit(thread.id, "start")
    await busy.entered.wait()
    await qrig.desk.submit(thread.id, "scheduled note", "collect", lane="cron")
    await qrig.desk.submit(thread.id, "and mine", "collect")
    busy.release.set()
    await qrig.rig.finish(first)
    await held.entered.wait()
    assert (runs.lanes.running("cron"), runs.lanes.running("main")) == (0, 1)
    held.release.set()
    await qrig.settle(thread.id)
