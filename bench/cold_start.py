"""2. Cold start: spawn `python -m sidecar` → the reply to `initialize`, and → its first turn.

Each spawn sends `initialize`, then at once a `ping` (answered while the sidecar still imports
what a turn needs), then starts a turn on a new thread with the scripted model and waits for
its end: "ready for a first turn" is spawn → that turn's end (MCP servers connected, the graph
compiled, DSPy and LiteLLM loaded, the model's two replies; the scripted model answers at once).

Baselines in the same run: the interpreter floor (`python -c pass`, spawn → exit), and, with
`BENCH_BASELINE_REPO=<a checkout>` (e.g. `git worktree add /tmp/atrium-base HEAD`), that
checkout's sidecar spawned alternately with this one, for a before/after. On a miss the
`-X importtime` summary shows which imports the start-up path pays for before the reply.
Targets: spawn → `initialize` reply ≤ 0.3 s; spawn → first turn ≤ 1.5 s (medians).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench._inprocess import check_events
from bench._proc import REPO, LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, ms, say, show, spread
from bench.model_server import API_KEY, MODEL, model_server

NAME = "cold_start"
SPAWNS = 7
INITIALIZE_TARGET_S = 0.3
FIRST_TURN_TARGET_S = 1.5
IMPORT_ROWS = 15
PROMPT = "What do my notes say?"
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


@dataclass
class Starts:
    """One sidecar's spawns: spawn → `initialize` reply, `initialize` reply → the reply to a
    `ping` sent with it, and spawn → the end of the first turn."""

    initialize: list[float] = field(default_factory=list[float])
    ping: list[float] = field(default_factory=list[float])
    first_turn: list[float] = field(default_factory=list[float])


async def _spawn(env: dict[str, str], repo: Path, starts: Starts) -> None:
    started = time.perf_counter()
    client = await LineClient.spawn(sidecar_argv(), env, cwd=repo)
    await client.call("initialize", {"client_name": "bench"})
    answered = time.perf_counter()
    await client.call("ping")
    pinged = time.perf_counter()
    thread = await client.call("thread/create", {"title": "first"})
    run = await client.call("run/start", {"thread_id": thread["id"], "text": PROMPT})
    check_events(await client.run_to_end(run["run_id"]))
    finished = time.perf_counter()
    await client.close()
    starts.initialize.append(answered - started)
    starts.ping.append(pinged - answered)
    starts.first_turn.append(finished - started)


async def _interpreter_floor() -> float:
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()
    return time.perf_counter() - started


def _baseline_repo() -> Path | None:
    raw = os.environ.get("BENCH_BASELINE_REPO", "").strip()
    return Path(raw).resolve() if raw else None


async def run() -> list[Line]:
    baseline = _baseline_repo()
    against = f", alternating with {baseline}" if baseline is not None else ""
    say(f"[{NAME}] spawn → initialize reply → first turn, {SPAWNS} spawns{against}")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with model_server() as api_base:
            workspace = make_workspace(root / "ws")

            def env_for(data: str) -> dict[str, str]:
                # A data folder each: the other checkout may not open this one's database.
                return sidecar_env(
                    root / data,
                    workspace,
                    ATRIUM_MODEL=MODEL,
                    ATRIUM_MODEL_API_BASE=api_base,
                    ATRIUM_MODEL_API_KEY=API_KEY,
                )

            env, baseline_env = env_for("data"), env_for("baseline-data")
            here, before, floors = Starts(), Starts(), list[float]()
            await _spawn(env, REPO, Starts())  # creates the database, warms the page cache
            if baseline is not None:
                await _spawn(baseline_env, baseline, Starts())
            for _ in range(SPAWNS):
                await _spawn(env, REPO, here)
                if baseline is not None:
                    await _spawn(baseline_env, baseline, before)
                floors.append(await _interpreter_floor())
            lines = _report(here, before if baseline is not None else None, floors)
            if median(here.initialize) > INITIALIZE_TARGET_S:
                await _import_breakdown(env)
    return lines


def _report(here: Starts, before: Starts | None, floors: list[float]) -> list[Line]:
    lines: list[Line] = [
        Figure(NAME, "interpreter floor (python -c pass)", spread(floors)),
        Figure(NAME, "spawn → initialize reply", spread(here.initialize)),
        Figure(NAME, "ping sent with it, after the reply", spread(here.ping)),
        Figure(NAME, "spawn → first turn answered", spread(here.first_turn)),
    ]
    if before is not None:
        lines += [
            Figure(NAME, "baseline: spawn → initialize reply", spread(before.initialize)),
            Figure(NAME, "baseline: ping after the reply", spread(before.ping)),
            Figure(NAME, "baseline: spawn → first turn answered", spread(before.first_turn)),
        ]
    lines += [
        Target(
            NAME, "spawn → initialize (median)", median(here.initialize), INITIALIZE_TARGET_S, "s"
        ),
        Target(
            NAME, "spawn → first turn (median)", median(here.first_turn), FIRST_TURN_TARGET_S, "s"
        ),
    ]
    for line in lines:
        show(line)
    return lines


async def _import_breakdown(env: dict[str, str]) -> None:
    """Spawn once more with `-X importtime`, kill it at the `initialize` reply, and print what
    was imported before the reply: the import statements the start-up path ran (top level of
    the importtime tree, cumulative) and the packages that cost the most (own time), i.e. what
    to make lazy or move off the event loop. (The app's import on its worker thread runs
    alongside: what it finished before the reply is listed too.)"""
    client = await LineClient.spawn(sidecar_argv("-X", "importtime"), env)
    await client.call("initialize", {"client_name": "bench"})
    # Everything written to stderr before the reply is already in the pipe; kill, then drain.
    client.proc.send_signal(signal.SIGKILL)
    await client.close(graceful=False)
    statements, packages = _import_costs(client.stderr.decode(errors="replace"))
    say(f"  imports before the initialize reply (-X importtime; top {IMPORT_ROWS}):")
    say("    import statements run by the start-up path, cumulative:")
    for module, micros in statements[:IMPORT_ROWS]:
        say(f"      {ms(micros / 1e6):>9}  {module}")
    say("    packages by their own import time (all submodules):")
    for package, micros in packages[:IMPORT_ROWS]:
        say(f"      {ms(micros / 1e6):>9}  {package}")


def _import_costs(importtime: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(top-level import statements by cumulative µs, top-level packages by self µs)."""
    statements: dict[str, int] = {}
    packages: dict[str, int] = {}
    for self_us, cumulative_us, indent, module in _IMPORT_LINE.findall(importtime):
        if not indent:
            statements[module] = statements.get(module, 0) + int(cumulative_us)
        package = module.split(".")[0]
        packages[package] = packages.get(package, 0) + int(self_us)
    return _by_cost(statements), _by_cost(packages)


def _by_cost(costs: dict[str, int]) -> list[tuple[str, int]]:
    return sorted(costs.items(), key=lambda kv: -kv[1])
