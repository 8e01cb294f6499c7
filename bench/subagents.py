"""6. Fan-out: a plan of 50 independent `internal` subagents vs a plan of one, through the real
sidecar, each subagent one scripted model call with a fixed 0.2 s model latency.

The profile's concurrency is raised to 50 so the cap does not serialise them; the thread is
autonomous (no plan approval). Delegation runs in the background: the turn that delegates ends
at once and the plan's tasks run under a background run of the thread, so the wall time is
run/start → the plan's end (its background run's `run_finished`), medians of alternating trials
after a warm-up delegation that loads DSPy. Target: 50 <= 1.5 x one + 1 s.

The plan's end is announced into the thread as a turn of the main agent that starts by itself;
announcement latency is the time from the background run's `run_finished` to that turn's
`run_started`, as the client receives them (every trial, both sizes). Target (issue 23): ≤ 1 s.
A trial waits for its announcement turn to end, so the next one starts on a quiet sidecar.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench._proc import TERMINAL, LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, say, show, spread
from bench.model_server import API_KEY, MODEL, MODEL_LATENCY_S, model_server

NAME = "subagents"
MANY = 50
TRIALS = 3
ANNOUNCE_LIMIT_S = 1.0

T = TypeVar("T")


def _future(futures: dict[str, asyncio.Future[T]], thread_id: str) -> asyncio.Future[T]:
    if thread_id not in futures:
        futures[thread_id] = asyncio.get_running_loop().create_future()
    return futures[thread_id]


class _PlanClient(LineClient):
    """A LineClient that also follows each thread's background plan run and the turn its end
    starts by itself, noting when their events arrive."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        super().__init__(proc)
        self._plan_runs: dict[str, asyncio.Future[str]] = {}
        self._plan_ends: dict[str, asyncio.Future[tuple[str, float]]] = {}
        self._announced: dict[str, asyncio.Future[tuple[str, float]]] = {}

    def _on_event(self, params: dict[str, Any]) -> None:
        arrived = time.perf_counter()
        super()._on_event(params)
        thread_id, run_id = params["thread_id"], params["run_id"]
        kind, background = params["event"]["type"], bool(params.get("background"))
        plan_run = _future(self._plan_runs, thread_id)
        plan_end = _future(self._plan_ends, thread_id)
        announced = _future(self._announced, thread_id)
        if background and kind == "run_started" and not plan_run.done():
            plan_run.set_result(run_id)
        elif background and kind in TERMINAL and not plan_end.done():
            plan_end.set_result((kind, arrived))
        elif not background and kind == "run_started" and plan_end.done() and not announced.done():
            announced.set_result((run_id, arrived))  # the thread's first turn after its plan

    async def plan_run(self, thread_id: str, within: float) -> str:
        """The id of the thread's (first) background plan run, once it started."""
        async with asyncio.timeout(within):
            return await _future(self._plan_runs, thread_id)

    async def plan_end(self, thread_id: str, within: float) -> tuple[str, float]:
        """The terminal event type of the thread's plan run and when it arrived."""
        async with asyncio.timeout(within):
            return await _future(self._plan_ends, thread_id)

    async def announcement(self, thread_id: str, within: float) -> tuple[str, float]:
        """The turn the plan's end started by itself, and when its `run_started` arrived."""
        async with asyncio.timeout(within):
            return await _future(self._announced, thread_id)


@dataclass(frozen=True, slots=True)
class _Trial:
    wall_s: float  # run/start → the plan's background run_finished
    announce_s: float  # the plan run's run_finished → the announcement turn's run_started


def _plan(count: int) -> str:
    """A delegation of `count` independent tasks (a plan holds at most 20; a delegated batch
    up to 64, and runs without plan approval)."""
    tasks = [
        {"id": f"t{n}", "title": f"Task {n}", "objective": f"Do part {n}.", "profile": "general"}
        for n in range(count)
    ]
    return "/delegate " + json.dumps({"tasks": tasks})


async def _run_plan(client: _PlanClient, count: int) -> _Trial:
    thread = await client.call("thread/create", {"title": f"bench {count}"})
    thread_id = thread["id"]
    await client.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
    started = time.perf_counter()
    run = await client.call("run/start", {"thread_id": thread_id, "text": _plan(count)})
    turn = await client.run_to_end(run["run_id"], within=600)
    if turn[-1]["type"] != "run_finished":
        raise RuntimeError(f"the delegating turn of a plan of {count} ended with {turn[-1]}")
    plan_run = await client.plan_run(thread_id, within=600)
    final, ended = await client.plan_end(thread_id, within=600)
    client.run_events.pop(plan_run, None)
    if final != "run_finished":
        raise RuntimeError(f"the background run of a plan of {count} ended with {final}")
    got = await client.call("plan/get", {"thread_id": thread_id})
    states = {t["status"] for t in got["plans"][-1]["tasks"]}
    if states != {"succeeded"}:
        raise RuntimeError(f"a plan of {count} ended with tasks {states}")
    announce_run, announced = await client.announcement(thread_id, within=120)
    events = await client.run_to_end(announce_run, within=120)
    if events[-1]["type"] != "run_finished":
        raise RuntimeError(f"the announcement of a plan of {count} ended with {events[-1]}")
    return _Trial(wall_s=ended - started, announce_s=announced - ended)


async def _raise_concurrency(client: LineClient) -> None:
    listed: dict[str, Any] = await client.call("profile/list")
    profiles = [
        {**p, "concurrency": MANY} if p["id"] == "general" else p for p in listed["profiles"]
    ]
    await client.call("profile/set", {"profiles": profiles})


async def run() -> list[Line]:
    say(f"[{NAME}] a plan of {MANY} parallel internal subagents vs a plan of 1")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with model_server("--answer-at-once") as api_base:
            env = sidecar_env(
                root / "data",
                make_workspace(root / "ws"),
                ATRIUM_MODEL=MODEL,
                ATRIUM_MODEL_API_BASE=api_base,
                ATRIUM_MODEL_API_KEY=API_KEY,
            )
            client = await _PlanClient.spawn(sidecar_argv(), env)
            assert isinstance(client, _PlanClient)  # `spawn` builds the class it is called on
            try:
                await client.call("initialize", {"client_name": "bench"})
                await client.call("tool/list")
                await _raise_concurrency(client)
                await _run_plan(client, 1)  # warm-up: DSPy, LiteLLM, the graph
                ones: list[_Trial] = []
                manys: list[_Trial] = []
                for _ in range(TRIALS):
                    ones.append(await _run_plan(client, 1))
                    manys.append(await _run_plan(client, MANY))
            finally:
                await client.close()
    one = [t.wall_s for t in ones]
    many = [t.wall_s for t in manys]
    announce = [t.announce_s for t in [*ones, *manys]]
    limit = 1.5 * median(one) + 1.0
    lines: list[Line] = [
        Figure(NAME, f"plan of 1 (model latency {MODEL_LATENCY_S} s)", spread(one)),
        Figure(NAME, f"plan of {MANY} in parallel", spread(many)),
        Target(NAME, f"{MANY} / (1.5 x one + 1 s)", median(many) / limit, 1.0),
        Figure(NAME, "announcement latency (plan end → turn)", spread(announce)),
        Target(NAME, "announcement latency (median)", median(announce), ANNOUNCE_LIMIT_S, "s"),
    ]
    for line in lines:
        show(line)
    return lines
