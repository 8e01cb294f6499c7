"""`python -m bench [name ...]`: run the named benchmarks (all by default), print a summary.

Always exits 0 after a complete run, whatever targets were missed: these are figures, not tests.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable

# Before anything can import LiteLLM: no fetch of its model-cost map from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench import (
    agents,
    bundle,
    cold_start,
    delegation,
    gui,
    lanes,
    long_thread,
    mcp_large,
    memory,
    parse,
    ping,
    review_gate,
    schedules,
    skills,
    stream,
    stream_anthropic,
    subagents,
    tool_search,
    turn,
    undo,
)
from bench._report import Line, say, summary

Benchmark = Callable[[], Awaitable[list[Line]]]

BENCHMARKS: dict[str, Benchmark] = {
    ping.NAME: ping.run,
    cold_start.NAME: cold_start.run,
    turn.NAME: turn.run,
    long_thread.NAME: long_thread.run,
    mcp_large.NAME: mcp_large.run,
    memory.NAME: memory.run,
    subagents.NAME: subagents.run,
    delegation.NAME: delegation.run,
    parse.NAME: parse.run,
    stream.NAME: stream.run,
    stream_anthropic.NAME: stream_anthropic.run,
    bundle.NAME: bundle.run,
    skills.NAME: skills.run,
    agents.NAME: agents.run,
    gui.NAME: gui.run,
    review_gate.NAME: review_gate.run,
    undo.NAME: undo.run,
    schedules.NAME: schedules.run,
    lanes.NAME: lanes.run,
    tool_search.NAME: tool_search.run,
}


async def run_all(names: list[str]) -> list[Line]:
    lines: list[Line] = []
    for name in names:
        started = time.perf_counter()
        lines += await BENCHMARKS[name]()
        say(f"  ({name} took {time.perf_counter() - started:.0f} s)")
        say()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names", nargs="*", metavar="name", help=f"any of {', '.join(BENCHMARKS)} (default: all)"
    )
    args = parser.parse_args()
    names: list[str] = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    # A root handler first, at WARNING: in-process MCP servers would otherwise install theirs at
    # INFO, and LiteLLM would log every model call into the figures.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    started = time.perf_counter()
    lines = asyncio.run(run_all(names))
    summary(lines)
    say(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
