"""7. Talking while the team works: the author's message → the model's first token, with 20
delegated tasks working in the background (on five other threads) against none, through the real
sidecar and a scripted model in its own process.

The tasks' model requests are held (the scripted model answers them after two minutes), so all
20 tasks stay running, each holding its slot, its sub-thread and its open model request while
the author chats. The main agent's requests are answered at once. Each figure is the median of
`TURNS` turns on one thread, after a warm-up turn; the turns without tasks run first, then 20
tasks are started and the same turns run again. Target (issue 23): busy / idle ≤ 1.2x.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, median, say, show, spread
from bench.model_server import API_KEY, MODEL, model_server

NAME = "delegation"
THREADS = 5
TASKS_PER_THREAD = 4
TURNS = 15
LIMIT = 1.2


class _TokenClient(LineClient):
    """A LineClient that notes when each run's first token arrives."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        super().__init__(proc)
        self.first_token: dict[str, float] = {}
        self.running_tasks: set[tuple[str, str]] = set()
        self._changed = asyncio.Event()

    def _on_event(self, params: dict[str, Any]) -> None:
        arrived = time.perf_counter()
        super()._on_event(params)
        event = params["event"]
        if event["type"] == "token":
            self.first_token.setdefault(params["run_id"], arrived)
        elif event["type"] == "task_update":
            key = (params["thread_id"], event["task"]["id"])
            if event["task"]["status"] == "running":
                self.running_tasks.add(key)
            else:
                self.running_tasks.discard(key)
        self._changed.set()

    async def until(self, ready: Any, within: float) -> None:
        async with asyncio.timeout(within):
            while not ready():
                self._changed.clear()
                await self._changed.wait()


async def _first_token(client: _TokenClient, thread_id: str, text: str) -> float:
    started = time.perf_counter()
    run = await client.call("run/start", {"thread_id": thread_id, "text": text})
    events = await client.run_to_end(run["run_id"], within=60)
    if run.get("queued_id") or events[-1]["type"] != "run_finished":
        raise RuntimeError(f"the author's turn did not run at once: {events[-1]}")
    return client.first_token[run["run_id"]] - started


async def _turns(client: _TokenClient, thread_id: str) -> list[float]:
    return [await _first_token(client, thread_id, f"How is it going? ({n})") for n in range(TURNS)]


async def _start_tasks(client: _TokenClient) -> None:
    listed: dict[str, Any] = await client.call("profile/list")
    profiles = [
        {**p, "concurrency": THREADS * TASKS_PER_THREAD} if p["id"] == "general" else p
        for p in listed["profiles"]
    ]
    await client.call("profile/set", {"profiles": profiles})
    for n in range(THREADS):
        thread_id = (await client.call("thread/create", {}))["id"]
        await client.call("thread/set_autonomous", {"thread_id": thread_id, "autonomous": True})
        tasks = [
            {"id": f"t{i}", "title": f"Task t{i}", "objective": f"Do t{i}.", "profile": "general"}
            for i in range(TASKS_PER_THREAD)
        ]
        plan = json.dumps({"goal": f"work {n}", "tasks": tasks})
        run = await client.call("run/start", {"thread_id": thread_id, "text": "/plan " + plan})
        await client.run_to_end(run["run_id"], within=60)
    total = THREADS * TASKS_PER_THREAD
    await client.until(lambda: len(client.running_tasks) >= total, within=60)


async def run() -> list[Line]:
    total = THREADS * TASKS_PER_THREAD
    say(f"[{NAME}] author message → first token, with {total} background tasks vs none")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with model_server("--hold-tasks") as api_base:
            env = sidecar_env(
                root / "data",
                make_workspace(root / "ws"),
                ATRIUM_MODEL=MODEL,
                ATRIUM_MODEL_API_BASE=api_base,
                ATRIUM_MODEL_API_KEY=API_KEY,
            )
            client = await _TokenClient.spawn(sidecar_argv(), env)
            assert isinstance(client, _TokenClient)  # `spawn` builds the class it is called on
            try:
                await client.call("initialize", {"client_name": "bench"})
                await client.call("tool/list")
                chat = (await client.call("thread/create", {}))["id"]
                await _first_token(client, chat, "Hello")  # warm-up: DSPy, LiteLLM, the graph
                idle = await _turns(client, chat)
                await _start_tasks(client)
                busy = await _turns(client, chat)
                still = len(client.running_tasks)
            finally:
                await client.close(graceful=False)
    lines: list[Line] = [
        Figure(NAME, "first token, no tasks running", spread(idle)),
        Figure(NAME, f"first token, {still} tasks running", spread(busy)),
        Target(NAME, "busy / idle (median)", median(busy) / median(idle), LIMIT),
    ]
    for line in lines:
        show(line)
    return lines
