"""1. `ping` round trip through the real sidecar vs a bare asyncio JSON-RPC echo over a pipe.

Both children run side by side and are pinged in alternating rounds by the same client code, so
drift on the shared machine hits both alike. Target: sidecar ≤ 2x the echo (median round trip).
"""

from __future__ import annotations

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
    return lines
