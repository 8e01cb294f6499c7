"""5. Large MCP results over stdio: the SDK's `stdio_client` vs the host's `StdioTransport`.

Both talk through `mcp.Client` to their own copy of the same server (this module run with
`--serve`: a `blob` tool returning a text of exactly n bytes, an `echo` tool), in alternating
trials so drift on the shared machine hits both alike. The SDK reads lines in quadratic time;
the host must stay linear.
Targets: host 8 MB result ≤ 0.2 s (median); host 8 MB / 1 MB time ≤ 12 (linear ≈ 8, quadratic
≈ 64; 1.5x slack for the fixed per-call cost); host / SDK on a small call ≤ 1.1x (median).
Run alone as `python -m bench mcp_large` or `python -m bench.mcp_large`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

from bench._proc import REPO
from bench._report import Figure, Line, Target, median, ms, say, show, spread, summary

if TYPE_CHECKING:
    from mcp import Client

NAME = "mcp_large"
SIZES_MB = (1, 4, 8)
TRIALS = 11
SMALL_ROUNDS = 5
SMALL_CALLS = 200
TARGET_8MB_S = 0.2
TARGET_GROWTH = 12.0
TARGET_SMALL = 1.1

Call = Callable[[], Awaitable[None]]


def _blob_call(client: Client, size: int) -> Call:
    async def call() -> None:
        result = await client.call_tool("blob", {"size": size})
        text = getattr(result.content[0], "text", "")
        assert len(text) == size, f"a {size}-byte result came back as {len(text)} bytes"

    return call


def _echo_call(client: Client) -> Call:
    async def call() -> None:
        await client.call_tool("echo", {"text": "hi"})

    return call


async def _timed(call: Call) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def _large(sdk: Client, host: Client) -> list[Line]:
    lines: list[Line] = []
    medians: dict[tuple[str, int], float] = {}
    for mb in SIZES_MB:
        calls = {"sdk": _blob_call(sdk, mb << 20), "host": _blob_call(host, mb << 20)}
        samples: dict[str, list[float]] = {"sdk": [], "host": []}
        for call in calls.values():
            await call()  # warm-up, unmeasured
        for _ in range(TRIALS):
            for who, call in calls.items():
                samples[who].append(await _timed(call))
        for who in ("sdk", "host"):
            medians[who, mb] = median(samples[who])
            rate = mb / medians[who, mb]
            line = Figure(NAME, f"{who} {mb} MB result", f"{spread(samples[who])}, {rate:.0f} MB/s")
            show(line)
            lines.append(line)
    first, last = SIZES_MB[0], SIZES_MB[-1]
    sdk_growth = medians["sdk", last] / medians["sdk", first]
    host_growth = medians["host", last] / medians["host", first]
    speedup = medians["sdk", last] / medians["host", last]
    tail: list[Line] = [
        Figure(NAME, f"sdk {last} MB / {first} MB time", f"{sdk_growth:.1f} (linear ≈ 8)"),
        Figure(NAME, f"sdk / host at {last} MB", f"{speedup:.1f}x"),
        Target(NAME, f"host {last} MB result (median)", medians["host", last], TARGET_8MB_S, "s"),
        Target(NAME, f"host {last} MB / {first} MB time (linear ≈ 8)", host_growth, TARGET_GROWTH),
    ]
    for line in tail:
        show(line)
    return lines + tail


async def _small(sdk: Client, host: Client) -> list[Line]:
    calls = {"sdk": _echo_call(sdk), "host": _echo_call(host)}
    samples: dict[str, list[float]] = {"sdk": [], "host": []}
    for call in calls.values():
        for _ in range(SMALL_CALLS):
            await call()  # warm-up, unmeasured
    for _ in range(SMALL_ROUNDS):
        for who, call in calls.items():
            samples[who] += [await _timed(call) for _ in range(SMALL_CALLS)]
    ratio = median(samples["host"]) / median(samples["sdk"])
    lines: list[Line] = [
        Figure(NAME, "sdk small call", spread(samples["sdk"])),
        Figure(NAME, "host small call", spread(samples["host"])),
        Target(NAME, "host / sdk small call (median)", ratio, TARGET_SMALL),
    ]
    for line in lines:
        show(line)
    return lines


async def run() -> list[Line]:
    from mcp import Client, StdioServerParameters

    from sidecar.host.stdio import StdioTransport

    say(
        f"[{NAME}] SDK stdio_client vs host StdioTransport: {', '.join(map(str, SIZES_MB))} MB "
        f"results ({TRIALS} alternating trials), {SMALL_ROUNDS} alternating rounds of "
        f"{SMALL_CALLS} small calls"
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bench.mcp_large", "--serve"], cwd=str(REPO)
    )
    async with AsyncExitStack() as stack:
        sdk = await stack.enter_async_context(Client(params))
        host = await stack.enter_async_context(Client(StdioTransport(params)))
        started = time.perf_counter()
        lines = await _large(sdk, host)
        lines += await _small(sdk, host)
        say(f"  (measured in {ms(time.perf_counter() - started)})")
    return lines


def serve() -> None:
    """The benchmark's server: `blob(size)` returns a text of `size` bytes; `echo(text)`."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-large")

    @server.tool(structured_output=False)
    def blob(size: int) -> str:  # pyright: ignore[reportUnusedFunction]
        return "x" * size

    @server.tool(structured_output=False)
    def echo(text: str) -> str:  # pyright: ignore[reportUnusedFunction]
        return text

    server.run("stdio")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_large", description=__doc__)
    parser.add_argument("--serve", action="store_true", help="be the benchmark's MCP server")
    if parser.parse_args().serve:
        serve()
        return
    summary(asyncio.run(run()))


if __name__ == "__main__":
    main()
