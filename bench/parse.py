"""7. Strong-agent transcript parsing: events per second through each controller's parser.

Each recorded transcript of tests/fixtures/controllers (a real Claude Code or Codex run) is
repeated to about 20,000 lines (its middle lines, so one run still begins and ends once) and
replayed through `replay_lines`, the same parsers the controllers use on a live CLI's stdout.
There is no target: the figure says how far parsing is from ever being the bottleneck (a CLI
emits tens of events per second).
"""

from __future__ import annotations

import time
from pathlib import Path

from bench._report import Figure, Line, say, show
from mcp_servers.agents.parsers import replay_lines
from mcp_servers.agents.results import Provider

NAME = "parse"
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "controllers"
TARGET_LINES = 20_000
TRIALS = 3


def _inflated(path: Path) -> list[str]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True) if line]
    if len(lines) < 3:
        return lines
    head, middle, tail = lines[:1], lines[1:-1], lines[-1:]
    repeats = max(1, TARGET_LINES // max(1, len(middle)))
    return head + middle * repeats + tail


def _rate(provider: Provider, lines: list[str]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(TRIALS):
        started = time.perf_counter()
        events, _result = replay_lines(provider, iter(lines), run_id="bench")
        best = min(best, time.perf_counter() - started)
        count = len(events)
    return count / best, count


async def run() -> list[Line]:
    say(f"[{NAME}] parsing recorded CLI transcripts inflated to ~{TARGET_LINES:,} lines")
    lines: list[Line] = []
    for provider, prefix in (("claude", "claude_"), ("codex", "codex_")):
        files = sorted(FIXTURES.glob(f"{prefix}*.jsonl"))
        if not files:
            say(f"  no {provider} fixtures at {FIXTURES.resolve()}")
            continue
        total_events, total_time = 0, 0.0
        for path in files:
            rate, count = _rate(provider, _inflated(path))  # pyright: ignore[reportArgumentType]
            total_events += count
            total_time += count / rate if rate else 0.0
        figure = f"{total_events / total_time:,.0f} events/s ({len(files)} transcripts)"
        lines.append(Figure(NAME, f"{provider} parser", figure))
    for line in lines:
        show(line)
    return lines
