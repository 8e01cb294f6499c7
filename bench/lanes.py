"""`lanes`: a message sent in interrupt mode to a running turn, through the real sidecar.

The turn waits on a scripted model that never answers (127.0.0.1). Measured from sending
`run/start` with mode `interrupt` to the running turn's `run_cancelled` event, against
`run/cancel` on the same kind of turn in the same run. Target: interrupt ≤ 0.5 s (median and
worst).
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from pathlib import Path

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, say, show, spread
from tests.fakes.model_server import Reply
from tests.fakes.openai_chat import openai_chat_server

NAME = "lanes"
ROUNDS = 10
LIMIT_S = 0.5


async def _cancelled(client: LineClient, run_id: str) -> float:
    events = await client.run_to_end(run_id, within=60)
    assert events[-1]["type"] == "run_cancelled", events[-1]
    return time.perf_counter()


async def _wait_generation(server: object, count: int) -> None:
    await asyncio.to_thread(server.wait_for_generations, count, 60)  # type: ignore[attr-defined]


async def run() -> list[Line]:
    say(f"[{NAME}] interrupt mode vs run/cancel, {ROUNDS} rounds each")
    release = threading.Event()
    interrupts: list[float] = []
    cancels: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp,
        openai_chat_server(fallback=lambda _request: Reply.hang(release)) as model,
    ):
        root = Path(tmp)
        env = sidecar_env(
            root / "data",
            make_workspace(root / "ws"),
            ATRIUM_MODEL="openai/gpt-4o-mini",
            ATRIUM_MODEL_API_BASE=model.url + "/v1",
            ATRIUM_MODEL_API_KEY="x",
        )
        client = await LineClient.spawn(sidecar_argv(), env)
        try:
            await client.call("initialize", {"client_name": "bench"})
            thread = await client.call("thread/create", {})
            tid = thread["id"]
            run = await client.call("run/start", {"thread_id": tid, "text": "think"})
            for n in range(ROUNDS * 2):
                await _wait_generation(model, n + 1)
                start = time.perf_counter()
                if n % 2 == 0:
                    new = await client.call(
                        "run/start", {"thread_id": tid, "text": f"stop {n}", "mode": "interrupt"}
                    )
                    interrupts.append(await _cancelled(client, run["run_id"]) - start)
                    run = new
                else:
                    await client.call("run/cancel", {"thread_id": tid})
                    cancels.append(await _cancelled(client, run["run_id"]) - start)
                    run = await client.call("run/start", {"thread_id": tid, "text": f"go {n}"})
        finally:
            release.set()
            await client.close(graceful=False)
    lines: list[Line] = [
        Figure(NAME, "run/cancel → run_cancelled", spread(cancels)),
        Figure(NAME, "interrupt message → run_cancelled", spread(interrupts)),
        Target(NAME, "interrupt → stopped (median)", median(interrupts), LIMIT_S, "s"),
        Target(NAME, "interrupt → stopped (worst)", max(interrupts), LIMIT_S, "s"),
    ]
    for line in lines:
        show(line)
    return lines
