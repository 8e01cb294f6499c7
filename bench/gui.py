"""`gui`: the real window (offscreen) under a long stream and opening long threads (issue 11).

Each case runs `bench.gui_window` in a process of its own (a fresh QApplication, its own RSS):

- 100,000 tokens at 2,000 tokens/s, one `run/event` per token (the worst case for the window)
  from `bench.gui_streamer`: the worst and the p99 GUI-thread stall while it streams, the
  last-token lag (when the window showed the last token minus when it was written), whether the
  transcript holds exactly the streamed text, and the window process's RSS after the stream.
- A thread of 5,000 and one of 100,000 messages, seeded in a fresh database and opened over the
  real sidecar: the time from selecting it to the first paint of its transcript and the worst
  stall meanwhile.

The baseline, measured in the same run by the same sampler: the worst stall of the idle window
over one second before each case (the machine's own noise; on a loaded machine it can exceed
the targets by itself). `BENCH_GUI_TOKENS` and `BENCH_GUI_RATE` override the stream.

Targets: stall ≤ 50 ms, p99 ≤ 20 ms, last-token lag ≤ 100 ms; first paint ≤ 0.3 s (5,000) and
≤ 0.5 s (100,000) with no stall over 50 ms; RSS after the stream ≤ 150 MB.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from bench._proc import REPO
from bench._report import Figure, Line, Target, ms, say, show

NAME = "gui"
TOKENS = int(os.environ.get("BENCH_GUI_TOKENS", "100000"))
RATE = float(os.environ.get("BENCH_GUI_RATE", "2000"))
THREADS = (5_000, 100_000)
FIRST_PAINT_TARGETS = {5_000: 0.3, 100_000: 0.5}
MB = 1024 * 1024
RSS_TARGET_MB = 150


async def _measure(*args: str) -> dict[str, Any]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.gui_window",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    out, err = await proc.communicate()
    lines = out.decode().strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"gui_window {args} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return json.loads(lines[-1])


def _rss(value: int) -> str:
    verdict = "PASS" if value <= RSS_TARGET_MB * MB else "MISS"
    return f"{value / MB:.0f} MB (target ≤ {RSS_TARGET_MB} MB) {verdict}"


async def run() -> list[Line]:
    say(f"[{NAME}] the real window, offscreen: {TOKENS:,} tokens at {RATE:,.0f} tokens/s")
    stream = await _measure("stream", str(TOKENS), str(RATE))
    lines: list[Line] = [
        Target(NAME, "stream: worst GUI stall", stream["worst_stall_s"], 0.050, "s"),
        Target(NAME, "stream: p99 GUI stall", stream["p99_stall_s"], 0.020, "s"),
        Target(NAME, "stream: last-token lag", stream["last_token_lag_s"], 0.100, "s"),
        Figure(
            NAME,
            "stream: transcript holds the exact text",
            f"{stream['exact']} (completed {stream['completed']}, {stream['elapsed_s']:.1f} s)",
        ),
        Figure(NAME, "stream: idle worst stall (baseline)", ms(stream["idle_worst_stall_s"])),
        Figure(NAME, "window RSS after the stream", _rss(stream["rss_bytes"])),
        Figure(
            NAME, "window RSS before it (baseline)", f"{stream['rss_before_bytes'] / MB:.0f} MB"
        ),
    ]
    for messages in THREADS:
        say(f"[{NAME}] opening a thread of {messages:,} messages")
        opened = await _measure("open", str(messages))
        lines += [
            Target(
                NAME,
                f"open {messages:,}: first paint",
                opened["first_paint_s"],
                FIRST_PAINT_TARGETS[messages],
                "s",
            ),
            Target(NAME, f"open {messages:,}: worst stall", opened["worst_stall_s"], 0.050, "s"),
            Figure(
                NAME,
                f"open {messages:,}: idle worst stall (baseline)",
                f"{ms(opened['idle_worst_stall_s'])}; {opened['rows']} rows shown first",
            ),
        ]
    for line in lines:
        show(line)
    return lines
