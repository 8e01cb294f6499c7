"""The background desk in process (real store file, real graph and checkpoints, the real
`TeamDesk` and message queue, a scripted planner): a delegated plan leaves the author's turn at
once, runs under a background run of its own, and its report comes back as a turn by itself."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.protocol import ANNOUNCEMENT_PREFIX
from tests.sidecar.runtime import test_queueing
from tests.sidecar.runtime.scripted import answer
from tests.sidecar.runtime.test_queueing import QueueRig

pytestmark = pytest.mark.anyio

qrig = test_queueing.qrig  # the in-process runtime with its queue and background desk

FINDINGS = "The notes say the river is wide."


async def _answered(qrig: QueueRig, thread_id: str, text: str) -> None:
    """Wait until the thread's last message is `text` and nothing runs or waits on it."""
    store = qrig.rig.store
    async with asyncio.timeout(30):
        while not (
            store.recent_messages(thread_id, 1)[-1].content == text
            and not qrig.rig.runs.is_busy(thread_id)
            and not qrig.desk.repo.count_queued(thread_id)
        ):
            qrig.changed.clear()
            await qrig.changed.wait()


async def test_a_delegated_task_runs_in_the_background_and_its_report_is_a_turn_of_its_own(
    qrig: QueueRig,
):
    store = qrig.rig.store
    thread = store.create_thread("t")
    qrig.rig.planner.script += [answer(FINDINGS), answer("Your summary is ready.")]
    first, _ = await qrig.desk.submit(thread.id, "/delegate general Summarize my notes")
    events = await qrig.rig.finish(first)
    assert events[-1].event.type == "run_finished"

    await _answered(qrig, thread.id, "Your summary is ready.")
    [plan] = store.plans(thread.id)
    assert store.get_plan(plan.id).status == "completed"  # type: ignore[union-attr]
    background = [e for e in qrig.rig.events if e.background]
    assert len({e.run_id for e in background}) == 1
    assert [background[0].event.type, background[-1].event.type] == ["run_started", "run_finished"]
    # The subagent answered first, then the announcement turn saw its report.
    announcement_turn = qrig.rig.planner.seen[-1]
    assert any(
        t.content.startswith(ANNOUNCEMENT_PREFIX) and FINDINGS in t.content
        for t in announcement_turn
    )
    contents = [m.content for m in store.recent_messages(thread.id, 20)]
    assert any(f"Plan {plan.id} is running in the background" in c for c in contents)
    assert sum(c.startswith(ANNOUNCEMENT_PREFIX) for c in contents) == 1
    assert qrig.started[0] == first and len(qrig.started) == 3  # turn, background run, report
