"""1. `ping` round trip through the real sidecar vs a bare asyncio JSON-RPC echo over a pipe.

Both children run side by side and are pinged in alternating rounds by the same client code, so
drift on the shared machine hits both alike. Target: sidecar ≤ 2x the echo (median round trip).

2. `ping` while a CPU-heavy tool runs for about 10 s: a workspace regex search over 64 MB of short
lines (the workspace server runs inside the sidecar, in a worker thread; the search stops at its
10 s budget), against the idle sidecar's ping measured in the same run. Targets: busy median ≤ 2x
idle median, and the slowest busy ping ≤ 100 ms.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, say, show, spread

NAME = "ping"
ROUNDS = 10
PINGS_PER_ROUND = 200
WARM_UP = 200
TARGET = 2.0
BUSY_FILES = 16
BUSY_FILE_BYTES = 4 * 1024 * 1024
BUSY_LIMIT_S = 0.100


async def _round(client: LineClient, count: int) -> list[float]:
    samples: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        await client.call("ping")
        samples.append(time.perf_counter() - start)
    return samples


async def run() -> list[Line]:
    say(f"[{NAME}] sidecar vs bare echo, {ROUNDS} alternating rounds of {PINGS_PER_ROUND} pings")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        env = sidecar_env(root / "data", make_workspace(root / "ws"))
        sidecar = await LineClient.spawn(sidecar_argv(), env)
        echo = await LineClient.spawn([sys.executable, "-m", "bench.echo_server"])
        try:
            await sidecar.call("initialize", {"client_name": "bench"})
            await sidecar.call("tool/list")  # MCP servers connected: the sidecar is idle
            for client in (sidecar, echo):
                await _round(client, WARM_UP)
            side: list[float] = []
            bare: list[float] = []
            for _ in range(ROUNDS):
                side += await _round(sidecar, PINGS_PER_ROUND)
                bare += await _round(echo, PINGS_PER_ROUND)
        finally:
            await sidecar.close()
            await echo.close(graceful=False)
    lines: list[Line] = [
        Figure(NAME, "sidecar ping round trip", spread(side)),
        Figure(NAME, "bare echo round trip", spread(bare)),
        Target(NAME, "sidecar / echo (median round trip)", median(side) / median(bare), TARGET),
    ]
    for line in lines:
        show(line)
    busy = await _while_busy()
    for line in busy:
        show(line)
    return lines + busy


def _heavy_workspace(root: Path) -> Path:
    """Files of short lines: a search spends its time in the per-line loop, not in reading."""
    make_workspace(root)
    chunk = ("abc\n" * (BUSY_FILE_BYTES // 4)).encode()
    for index in range(BUSY_FILES):
        (root / f"big{index:02}.txt").write_bytes(chunk)
    return root


async def _while_busy() -> list[Line]:
    say(f"[{NAME}] ping while a ~10 s workspace search runs, against idle ping")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        env = sidecar_env(root / "data", _heavy_workspace(root / "ws"))
        sidecar = await LineClient.spawn(sidecar_argv(), env)
        try:
            await sidecar.call("initialize", {"client_name": "bench"})
            await sidecar.call("tool/list")
            thread = await sidecar.call("thread/create", {})
            warm = await sidecar.call(
                "run/start", {"thread_id": thread["id"], "text": "/call workspace__list {}"}
            )
            await sidecar.run_to_end(warm["run_id"])
            await _round(sidecar, WARM_UP)
            idle = await _round(sidecar, PINGS_PER_ROUND * 2)
            # Every file may match as a whole (so none is ruled out in one pass) but no line
            # does: the search walks every line until its time budget runs out.
            arguments = {"query": "abc\\nabc", "regex": True}
            text = f"/call workspace__search {json.dumps(arguments)}"
            started = time.perf_counter()
            run = await sidecar.call("run/start", {"thread_id": thread["id"], "text": text})
            ended = asyncio.ensure_future(sidecar.run_to_end(run["run_id"], within=120))
            busy: list[float] = []
            while not ended.done():
                busy += await _round(sidecar, 10)
            await ended
            took = time.perf_counter() - started
        finally:
            await sidecar.close()
    return [
        Figure(NAME, "idle sidecar ping", f"{spread(idle)}, slowest {max(idle) * 1000:.1f} ms"),
        Figure(NAME, f"ping during a {took:.1f} s search", spread(busy)),
        Target(NAME, "busy / idle ping (median)", median(busy) / median(idle), TARGET),
        Target(NAME, "slowest ping during the search", max(busy), BUSY_LIMIT_S, unit="s"),
    ]
