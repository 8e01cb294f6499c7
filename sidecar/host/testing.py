"""Test a connection without adding the server: launch, handshake, list tools, disconnect."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace

from sidecar.host.connection import Connection
from sidecar.host.features.client import NoFeatures
from sidecar.host.spec import RestartPolicy, ServerSpec, ServerState, ServerStatus


@dataclass(frozen=True, slots=True)
class TestReport:
    ok: bool
    state: ServerState
    error: str | None
    tools: tuple[str, ...]
    stderr: tuple[str, ...]
    elapsed_s: float


async def test_connection(spec: ServerSpec, policy: RestartPolicy) -> TestReport:
    """One attempt, no restarts, no client features, no status notifications."""
    once = replace(policy, max_attempts=0)
    spec = replace(spec, enabled=True)

    def ignore(status: ServerStatus) -> None:
        del status

    conn = Connection(spec, NoFeatures(), once, ignore)
    started = time.monotonic()
    conn.start()
    try:
        await asyncio.wait_for(conn.settled.wait(), policy.start_timeout_s + 5)
        state, error = conn.state, conn.error
    except TimeoutError:
        state, error = "crashed", f"no answer within {policy.start_timeout_s:g} s"
    tools = tuple(sorted(t.tool for t in conn.tools))
    await conn.stop()
    return TestReport(
        ok=state == "ready",
        state=state,
        error=error,
        tools=tools,
        stderr=tuple(conn.stderr.lines),
        elapsed_s=time.monotonic() - started,
    )
