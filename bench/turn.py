"""3. One scripted turn (the model calls `workspace__read`, then answers) through the real sidecar
subprocess vs the same graph invoked directly in this process.

Both talk to the same scripted model server (its own process) through the real DSPy → LiteLLM
planner, with the same MCP servers and checkpointer kind. Turns alternate between the two (ABBA
order) after warm-up turns that load DSPy. On a miss, a sidecar run under cProfile shows where
its turns spend their time. Target: sidecar <= 1.5x the bare graph (medians).
"""

from __future__ import annotations

import pstats
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench._inprocess import InProcess, check_events, in_process
from bench._proc import REPO, LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, ms, say, show, spread
from bench.model_server import API_KEY, MODEL, model_server

NAME = "turn"
WARM_UP = 3
TRIALS = 20
TARGET = 1.5
PROFILED_TURNS = 15
PROFILE_ROWS = 15
PROMPT = "What do my notes say?"


async def sidecar_turn(client: LineClient, thread_id: str) -> float:
    started = time.perf_counter()
    run = await client.call("run/start", {"thread_id": thread_id, "text": PROMPT})
    events = await client.run_to_end(run["run_id"])
    elapsed = time.perf_counter() - started
    check_events(events)
    return elapsed


async def open_sidecar(
    env: dict[str, str], argv: list[str] | None = None
) -> tuple[LineClient, str]:
    """A sidecar with its MCP servers connected, and a new thread on it."""
    client = await LineClient.spawn(argv or sidecar_argv(), env)
    await client.call("initialize", {"client_name": "bench"})
    await client.call("tool/list")  # every MCP server connected
    thread = await client.call("thread/create", {"title": "bench"})
    return client, thread["id"]


async def _trials(
    client: LineClient, side_thread: str, rig: InProcess, bare_thread: str
) -> tuple[float, list[float], list[float]]:
    """(first sidecar turn, sidecar turns, bare turns), after the warm-up turns."""
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
    return first, side, bare


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
            client, side_thread = await open_sidecar(env)
            try:
                async with in_process(
                    root / "bare", make_workspace(root / "ws-bare"), api_base, MODEL
                ) as rig:
                    bare_thread = rig.store.create_thread("bench").id
                    first, side, bare = await _trials(client, side_thread, rig, bare_thread)
            finally:
                await client.close()
            lines: list[Line] = [
                Figure(NAME, "sidecar first turn (after tool/list)", ms(first)),
                Figure(NAME, "sidecar turn (run/start → run_finished)", spread(side)),
                Figure(NAME, "bare graph turn (in-process astream)", spread(bare)),
                Target(
                    NAME, "sidecar / bare graph (median turn)", median(side) / median(bare), TARGET
                ),
            ]
            for line in lines:
                show(line)
            if median(side) / median(bare) > TARGET:
                await _profile_sidecar(env, root / "sidecar.prof")
    return lines


async def _profile_sidecar(env: dict[str, str], out: Path) -> None:
    """Profile steady-state turns in a sidecar (its event loop) and print where they go."""
    argv = [sys.executable, "-m", "bench.profiled_sidecar", str(out)]
    client, thread_id = await open_sidecar(env, argv)
    try:
        for _ in range(WARM_UP):
            await sidecar_turn(client, thread_id)
        client.proc.send_signal(signal.SIGUSR1)
        await client.call("ping")  # the handler has run by the time the loop answers
        for _ in range(PROFILED_TURNS):
            await sidecar_turn(client, thread_id)
        client.proc.send_signal(signal.SIGUSR2)
    finally:
        await client.close()  # the stats are written before the sidecar reads `shutdown`
    say(f"  cProfile of the sidecar's event loop over {PROFILED_TURNS} turns after warm-up:")
    stats = pstats.Stats(str(out))
    say("  functions by own time:")
    stats.sort_stats("tottime").print_stats(PROFILE_ROWS)
    say("  the sidecar's own functions by cumulative time:")
    stats.sort_stats("cumulative").print_stats(f"{REPO}/sidecar/", PROFILE_ROWS)
