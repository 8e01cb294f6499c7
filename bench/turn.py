"""3. One scripted turn (the model calls `workspace__read`, then answers) through the real sidecar
subprocess vs the same graph invoked directly in this process.

Both talk to the same scripted model server (its own process) through the real DSPy → LiteLLM
planner, with the same MCP servers and checkpointer kind. Turns alternate between the two (ABBA
order) after warm-up turns that load DSPy. Target: sidecar ≤ 1.5x the bare graph (medians).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench._inprocess import check_events, in_process
from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, ms, say, show, spread
from bench.model_server import API_KEY, MODEL, model_server

NAME = "turn"
WARM_UP = 3
TRIALS = 20
TARGET = 1.5
PROMPT = "What do my notes say?"


async def sidecar_turn(client: LineClient, thread_id: str) -> float:
    started = time.perf_counter()
    run = await client.call("run/start", {"thread_id": thread_id, "text": PROMPT})
    events = await client.run_to_end(run["run_id"])
    elapsed = time.perf_counter() - started
    check_events(events)
    return elapsed


async def run() -> list[Line]:
    say(f"[{NAME}] sidecar turn vs bare graph turn, {TRIALS} alternating pairs")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with model_server() as api_base:
            env = sidecar_env(
                root / "data",
                make_workspace(root / "ws-sidecar"),
                ATRIUM_MODEL=MODEL,
                ATRIUM_MODEL_API_BASE=api_base,
                ATRIUM_MODEL_API_KEY=API_KEY,
            )
            client = await LineClient.spawn(sidecar_argv(), env)
            try:
                await client.call("initialize", {"client_name": "bench"})
                await client.call("tool/list")  # every MCP server connected
                thread = await client.call("thread/create", {"title": "bench"})
                side_thread = thread["id"]
                bare_root = root / "bare"
                workspace = make_workspace(root / "ws-bare")
                async with in_process(bare_root, workspace, api_base, MODEL) as rig:
                    bare_thread = rig.store.create_thread("bench").id
                    first = await sidecar_turn(client, side_thread)
                    await rig.bare_turn(bare_thread, PROMPT)
                    for _ in range(WARM_UP - 1):
                        await sidecar_turn(client, side_thread)
                        await rig.bare_turn(bare_thread, PROMPT)
                    side: list[float] = []
                    bare: list[float] = []
                    for trial in range(TRIALS):
                        if trial % 2:
                            bare.append(await rig.bare_turn(bare_thread, PROMPT))
                            side.append(await sidecar_turn(client, side_thread))
                        else:
                            side.append(await sidecar_turn(client, side_thread))
                            bare.append(await rig.bare_turn(bare_thread, PROMPT))
            finally:
                await client.close()
    lines: list[Line] = [
        Figure(NAME, "sidecar first turn (after tool/list)", ms(first)),
        Figure(NAME, "sidecar turn (run/start → run_finished)", spread(side)),
        Figure(NAME, "bare graph turn (in-process astream)", spread(bare)),
        Target(NAME, "sidecar / bare graph (median turn)", median(side) / median(bare), TARGET),
    ]
    for line in lines:
        show(line)
    return lines
