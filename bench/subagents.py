"""6. Fan-out: a plan of 50 independent `internal` subagents vs a plan of one, through the real
sidecar, each subagent one scripted model call with a fixed 0.2 s model latency.

The profile's concurrency is raised to 50 so the cap does not serialise them; the thread is
autonomous (no plan approval). Wall time is run/start → run_finished, medians of alternating
trials after a warm-up delegation that loads DSPy. Target: 50 <= 1.5 x one + 1 s.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, say, show, spread
from bench.model_server import API_KEY, MODEL, MODEL_LATENCY_S, model_server

NAME = "subagents"
MANY = 50
TRIALS = 3


def _plan(count: int) -> str:
    """A delegation of `count` independent tasks (a plan holds at most 20; a delegated batch
    up to 64, and runs without plan approval)."""
    tasks = [
        {"id": f"t{n}", "title": f"Task {n}", "objective": f"Do part {n}.", "profile": "general"}
        for n in range(count)
    ]
    return "/delegate " + json.dumps({"tasks": tasks})


async def _run_plan(client: LineClient, count: int) -> float:
    thread = await client.call("thread/create", {"title": f"bench {count}"})
    await client.call("thread/set_autonomous", {"thread_id": thread["id"], "autonomous": True})
    started = time.perf_counter()
    run = await client.call("run/start", {"thread_id": thread["id"], "text": _plan(count)})
    await client.run_to_end(run["run_id"], within=600)
    elapsed = time.perf_counter() - started
    got = await client.call("plan/get", {"thread_id": thread["id"]})
    states = {t["status"] for t in got["plans"][-1]["tasks"]}
    if states != {"succeeded"}:
        raise RuntimeError(f"a plan of {count} ended with tasks {states}")
    return elapsed


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
            client = await LineClient.spawn(sidecar_argv(), env)
            try:
                await client.call("initialize", {"client_name": "bench"})
                await client.call("tool/list")
                await _raise_concurrency(client)
                await _run_plan(client, 1)  # warm-up: DSPy, LiteLLM, the graph
                one: list[float] = []
                many: list[float] = []
                for _ in range(TRIALS):
                    one.append(await _run_plan(client, 1))
                    many.append(await _run_plan(client, MANY))
            finally:
                await client.close()
    limit = 1.5 * median(one) + 1.0
    lines: list[Line] = [
        Figure(NAME, f"plan of 1 (model latency {MODEL_LATENCY_S} s)", spread(one)),
        Figure(NAME, f"plan of {MANY} in parallel", spread(many)),
        Target(NAME, f"{MANY} / (1.5 x one + 1 s)", median(many) / limit, 1.0),
    ]
    for line in lines:
        show(line)
    return lines
