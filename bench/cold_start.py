"""2. Cold start: spawn `python -m sidecar` → the reply to `initialize`.

The interpreter floor (`python -c pass`, spawn → exit) is measured in the same run. On a miss the
`-X importtime` summary shows which top-level imports the start-up path pays for.
Target: median ≤ 0.8 s.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, ms, say, show, spread

NAME = "cold_start"
SPAWNS = 7
TARGET_S = 0.8
IMPORT_ROWS = 15
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


async def _spawn_to_initialize(env: dict[str, str]) -> float:
    started = time.perf_counter()
    client = await LineClient.spawn(sidecar_argv(), env)
    await client.call("initialize", {"client_name": "bench"})
    elapsed = time.perf_counter() - started
    # Shutting down while the MCP servers are still connecting takes seconds longer.
    await client.call("tool/list")
    await client.close()
    return elapsed


async def _interpreter_floor() -> float:
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await proc.wait()
    return time.perf_counter() - started


async def run() -> list[Line]:
    say(f"[{NAME}] spawn → initialize reply, {SPAWNS} spawns (after one unmeasured)")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        env = sidecar_env(root / "data", make_workspace(root / "ws"))
        await _spawn_to_initialize(env)  # creates the database and warms the page cache
        starts: list[float] = []
        floors: list[float] = []
        for _ in range(SPAWNS):
            starts.append(await _spawn_to_initialize(env))
            floors.append(await _interpreter_floor())
        lines: list[Line] = [
            Figure(NAME, "interpreter floor (python -c pass)", spread(floors)),
            Figure(NAME, "spawn → initialize reply", spread(starts)),
            Target(NAME, "cold start (median)", median(starts), TARGET_S, unit="s"),
        ]
        for line in lines:
            show(line)
        if median(starts) > TARGET_S:
            await _import_breakdown(env)
    return lines


async def _import_breakdown(env: dict[str, str]) -> None:
    """Spawn once more with `-X importtime`, kill it at the `initialize` reply, and print what
    was imported before the reply: the import statements the start-up path ran (top level of
    the importtime tree, cumulative) and the packages that cost the most (own time), i.e. what
    to make lazy or move off the event loop."""
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
