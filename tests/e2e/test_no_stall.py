"""No tool can stall the sidecar: nested-quantifier regexes against their worst inputs through
the real sidecar's workspace search, while the window keeps pinging."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.e2e.harness import Sidecar
from tests.mcp_servers.workspace.test_matching import REDOS_INPUTS, REDOS_PATTERNS

pytestmark = pytest.mark.anyio


async def test_redos_searches_all_return_while_ping_keeps_answering(
    sidecar: Sidecar, workspace: Path
) -> None:
    for index, text in enumerate(REDOS_INPUTS):
        (workspace / f"evil{index}.txt").write_text((text + "\n") * 200, encoding="utf-8")
    thread = await sidecar.call("thread/create", {})
    answered: list[float] = []
    searching = asyncio.Event()

    async def pinger() -> None:
        loop = asyncio.get_running_loop()
        while True:
            await sidecar.call("ping")
            if searching.is_set():
                answered.append(loop.time())
            await asyncio.sleep(0.005)

    pinging = asyncio.ensure_future(pinger())
    outcomes: list[str] = []
    try:
        searching.set()
        for pattern in REDOS_PATTERNS:
            for index in range(len(REDOS_INPUTS)):
                arguments = {"query": pattern, "regex": True, "path": f"evil{index}.txt"}
                run = await sidecar.call(
                    "run/start",
                    {
                        "thread_id": thread["id"],
                        "text": f"/call workspace__search {json.dumps(arguments)}",
                    },
                )
                events = await sidecar.run_to_end(run["run_id"], within=60)
                result = next(e.event for e in events if e.event.type == "tool_result")
                outcomes.append("error" if result.is_error else "ok")  # type: ignore[union-attr]
                assert events[-1].event.type == "run_finished"
        searching.clear()
        before = len(answered)
        async with asyncio.timeout(30):
            await sidecar.call("ping")
    finally:
        pinging.cancel()
        await asyncio.gather(pinging, return_exceptions=True)
    assert outcomes == ["ok"] * len(REDOS_PATTERNS) * len(REDOS_INPUTS)
    assert before >= len(outcomes)  # pings kept coming back while the searches ran
