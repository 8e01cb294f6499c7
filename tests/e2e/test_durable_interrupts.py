"""Nothing the author saw is lost, and nothing runs twice without their answer: the real sidecar
killed with SIGKILL right after it asked, and while an approved slow call runs.

Trials run in a few concurrent lanes; each lane is one data folder that a sidecar after the
next is started on, as an author restarting the app would (the restart after one trial's kill
is the start of the lane's next trial).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sidecar.protocol import InterruptEvent
from sidecar.runtime.recovery import MARKED_DONE, SKIPPED, UNCERTAIN
from tests.e2e.harness import RpcFailure, Sidecar

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KILL_TRIALS = int(os.environ.get("I13_KILL", "40"))
SLOW_CALL_TRIALS = int(os.environ.get("I13_SLOW", "20"))
LANES = 4
SLOW_PROGRAM = (
    "import pathlib, time\npathlib.Path('started').write_text('1')\ntime.sleep(3)\nprint('slept')\n"
)


@dataclass
class Lane:
    data: Path
    workspace: Path
    sidecar: Sidecar | None = None

    async def restart(self) -> Sidecar:
        """SIGKILL the running sidecar (if any) and start the next one on the same data."""
        if self.sidecar is not None:
            await self.sidecar.kill()
        self.sidecar = await Sidecar.start(self.data, self.workspace)
        return self.sidecar

    async def close(self) -> None:
        if self.sidecar is not None:
            await self.sidecar.kill()


def make_lanes(tmp_path: Path, count: int) -> list[Lane]:
    lanes: list[Lane] = []
    for index in range(count):
        data, workspace = tmp_path / f"data{index}", tmp_path / f"ws{index}"
        data.mkdir()
        workspace.mkdir()
        lanes.append(Lane(data, workspace))
    return lanes


async def first_interrupt(sidecar: Sidecar, run_id: str, within: float = 90) -> Any:
    await sidecar.wait_for(
        lambda events: any(e.run_id == run_id and e.event.type == "interrupt" for e in events),
        within,
    )
    event = next(e.event for e in sidecar.run_events(run_id) if isinstance(e.event, InterruptEvent))
    return event.interrupt


async def pending(sidecar: Sidecar, thread_id: str) -> list[dict[str, Any]]:
    return list((await sidecar.call("thread/get", {"thread_id": thread_id}))["interrupts"])


async def answer(sidecar: Sidecar, thread_id: str, interrupt_id: str, value: dict[str, Any]):
    run = await sidecar.call(
        "run/resume", {"thread_id": thread_id, "interrupt_id": interrupt_id, "value": value}
    )
    return await sidecar.run_to_end(run["run_id"], within=90)


async def tool_results(sidecar: Sidecar, thread_id: str) -> list[dict[str, Any]]:
    got = await sidecar.call("thread/get", {"thread_id": thread_id})
    return [m for m in got["messages"] if m["role"] == "tool"]


# Dozens of sidecar lives: a loaded machine needs more than the default per-test bound.
@pytest.mark.timeout(900)
async def test_an_interrupt_the_window_saw_survives_a_kill_right_after_and_runs_once(
    tmp_path: Path,
) -> None:
    lanes = make_lanes(tmp_path, LANES)
    rng = random.Random(13)
    delays = [rng.uniform(0.0, 0.020) for _ in range(KILL_TRIALS)]

    async def trial(lane: Lane, number: int) -> None:
        sidecar = lane.sidecar or await lane.restart()
        name = f"t{number}.txt"
        (lane.workspace / name).write_text("start", encoding="utf-8")
        thread = await sidecar.call("thread/create", {})
        arguments = {"path": name, "old": "start", "new": "start+"}
        run = await sidecar.call(
            "run/start",
            {"thread_id": thread["id"], "text": f"/call workspace__edit {json.dumps(arguments)}"},
        )
        seen = await first_interrupt(sidecar, run["run_id"])
        await asyncio.sleep(delays[number])
        sidecar = await lane.restart()
        after = await pending(sidecar, thread["id"])
        assert [i["id"] for i in after] == [seen.id], f"trial {number}: {after}"
        events = await answer(sidecar, thread["id"], seen.id, {"decision": "allow_once"})
        assert events[-1].event.type == "run_finished", events[-1]
        assert (lane.workspace / name).read_text(encoding="utf-8") == "start+"
        assert await pending(sidecar, thread["id"]) == []

    async def run_lane(lane: Lane, numbers: range) -> None:
        for number in numbers:
            await trial(lane, number)

    per_lane = KILL_TRIALS // LANES
    try:
        await asyncio.gather(
            *(
                run_lane(lane, range(i * per_lane, (i + 1) * per_lane))
                for i, lane in enumerate(lanes)
            )
        )
    finally:
        await asyncio.gather(*(lane.close() for lane in lanes))


def executions(lane: Lane) -> int:
    """How many times the slow program started (each run has its own folder)."""
    return len(list((lane.data / "sandbox").glob("*/started")))


async def start_slow_call(lane: Lane) -> tuple[Sidecar, str]:
    """Start the slow program, approve it, and SIGKILL the sidecar while it sleeps."""
    sidecar = lane.sidecar or await lane.restart()
    before = executions(lane)
    thread = await sidecar.call("thread/create", {})
    code = json.dumps({"code": SLOW_PROGRAM})
    run = await sidecar.call(
        "run/start", {"thread_id": thread["id"], "text": f"/call sandbox__run_python {code}"}
    )
    approval = await first_interrupt(sidecar, run["run_id"])
    await sidecar.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": approval.id,
            "value": {"decision": "allow_once"},
        },
    )
    async with asyncio.timeout(60):
        while executions(lane) == before:  # noqa: ASYNC110 - a file appearing signals nothing
            await asyncio.sleep(0.02)
    await asyncio.sleep(random.uniform(0.0, 0.5))
    sidecar = await lane.restart()
    return sidecar, thread["id"]


async def the_question(sidecar: Sidecar, thread_id: str) -> dict[str, Any]:
    got = await sidecar.call("thread/get", {"thread_id": thread_id})
    assert got["thread"]["status"] == "interrupted", got["thread"]
    [question] = got["interrupts"]
    assert question["kind"] == "question"
    assert question["choices"] == ["Mark as done", "Run again", "Skip"]
    assert "run_python" in question["title"] and "started" in question["body"]
    return question


@pytest.mark.timeout(900)
async def test_a_kill_during_an_approved_slow_call_asks_the_author_and_never_runs_it_twice(
    tmp_path: Path,
) -> None:
    lanes = make_lanes(tmp_path, LANES)
    endings = ("Skip", "Mark as done", "Run again", "retry", "new message")

    async def trial(lane: Lane, number: int) -> None:
        before = executions(lane)
        sidecar, thread_id = await start_slow_call(lane)
        assert executions(lane) == before + 1
        question = await the_question(sidecar, thread_id)
        ending = endings[number % len(endings)]
        if ending == "retry":
            run = await sidecar.call("run/retry", {"thread_id": thread_id})
            events = await sidecar.run_to_end(run["run_id"], within=90)
            asked = [e.event.interrupt for e in events if isinstance(e.event, InterruptEvent)]
            assert [i.id for i in asked] == [question["id"]]
            assert await pending(sidecar, thread_id) == [question]
            ending = "Skip"
        if ending == "new message":
            # While a question waits, a message is queued unless it is meant to take over.
            params = {"thread_id": thread_id, "text": "/tools", "mode": "interrupt"}
            run = await sidecar.call("run/start", params)
            await sidecar.run_to_end(run["run_id"], within=90)
            [result] = await tool_results(sidecar, thread_id)
            assert (result["content"], result["is_error"]) == (UNCERTAIN, True)
            assert executions(lane) == before + 1
            return
        events = await answer(sidecar, thread_id, question["id"], {"answer": ending})
        assert events[-1].event.type == "run_finished", events[-1]
        [result] = await tool_results(sidecar, thread_id)
        if ending == "Run again":
            assert executions(lane) == before + 2
            assert "slept" in result["content"] and not result["is_error"]
        else:
            assert executions(lane) == before + 1
            expected = {"Skip": (SKIPPED, True), "Mark as done": (MARKED_DONE, False)}[ending]
            assert (result["content"], result["is_error"]) == expected
        assert await pending(sidecar, thread_id) == []
        with pytest.raises(RpcFailure):
            await sidecar.call("run/retry", {"thread_id": thread_id})
        assert executions(lane) == before + (2 if ending == "Run again" else 1)

    async def run_lane(lane: Lane, numbers: range) -> None:
        for number in numbers:
            await trial(lane, number)

    per_lane = SLOW_CALL_TRIALS // LANES
    try:
        await asyncio.gather(
            *(
                run_lane(lane, range(i * per_lane, (i + 1) * per_lane))
                for i, lane in enumerate(lanes)
            )
        )
    finally:
        await asyncio.gather(*(lane.close() for lane in lanes))


async def test_an_answer_that_is_not_a_choice_is_refused_and_the_question_stays(
    tmp_path: Path,
) -> None:
    [lane] = make_lanes(tmp_path, 1)
    try:
        before = executions(lane)
        sidecar, thread_id = await start_slow_call(lane)
        question = await the_question(sidecar, thread_id)
        for bad in ({"answer": "maybe"}, {"decision": "allow_once"}, {}):
            with pytest.raises(RpcFailure) as refused:
                await sidecar.call(
                    "run/resume",
                    {"thread_id": thread_id, "interrupt_id": question["id"], "value": bad},
                )
            assert refused.value.code == -32004
        assert await pending(sidecar, thread_id) == [question]
        assert executions(lane) == before + 1
    finally:
        await lane.close()
