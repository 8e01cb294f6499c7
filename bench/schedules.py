"""`schedules`: the real sidecar holding 1,000 active schedules.

1. Idle CPU of the sidecar process (user + system time over a quiet window) with 1,000 active
   cron schedules, against the same sidecar with none, measured in the same run. Target: ≤ 1%
   of one core.
2. Fire latency: 100 one-shot schedules fall due 150 ms apart while the 1,000 wait; latency is
   the time from a fire's scheduled moment to its record (the claim that precedes the run), and
   to its run's start (the runs go one at a time through the `cron` lane, so that figure
   includes the queue). Target: claim latency p99 ≤ 1 s.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from bench._proc import LineClient, make_workspace, sidecar_argv, sidecar_env
from bench._report import Figure, Line, Target, say, show, spread
from mcp_servers.schedule import ScheduleBook

NAME = "schedules"
ACTIVE = 1000
ONE_SHOTS = 100
SPACING_S = 0.15
LEAD_S = 25.0
IDLE_WINDOW_S = 20.0
CPU_LIMIT = 0.01
LATENCY_LIMIT_S = 1.0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _book(db: Path) -> tuple[sqlite3.Connection, ScheduleBook]:
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    return conn, ScheduleBook(conn, default_timezone="UTC")


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(0.99 * len(ordered) + 0.999) - 1)]


async def _idle_cpu(root: Path, schedules: int) -> float:
    data = root / f"data-{schedules}"
    conn, book = _book(data / "atrium.db")
    for n in range(schedules):
        book.create(kind="cron", spec=f"{n % 60} {n % 24} * * *", prompt=f"job {n}")
    conn.close()
    env = sidecar_env(data, make_workspace(root / "ws"), TZ="UTC")
    client = await LineClient.spawn(sidecar_argv(), env)
    try:
        await client.call("initialize", {"client_name": "bench"})
        await client.call("tool/list")
        listed = await client.call("schedule/list")
        assert len(listed["schedules"]) == schedules
        await asyncio.sleep(5)  # warm-up imports settle
        before, start = _cpu_seconds(client.proc.pid), time.monotonic()
        await asyncio.sleep(IDLE_WINDOW_S)
        return (_cpu_seconds(client.proc.pid) - before) / (time.monotonic() - start)
    finally:
        await client.close()


async def _latency(root: Path) -> tuple[list[float], list[float]]:
    data = root / "data-fire"
    conn, book = _book(data / "atrium.db")
    for n in range(ACTIVE):
        book.create(kind="cron", spec=f"{n % 60} {n % 24} * * *", prompt=f"job {n}")
    first = time.time() + LEAD_S
    due = [first + n * SPACING_S for n in range(ONE_SHOTS)]
    ids = [
        book.create(
            kind="once",
            spec=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at))
            + f".{int((at % 1) * 1e6):06d}+00:00",
            prompt=f"one-shot {n}",
        ).id
        for n, at in enumerate(due)
    ]
    conn.close()
    env = sidecar_env(data, make_workspace(root / "ws"), TZ="UTC")
    client = await LineClient.spawn(sidecar_argv(), env)
    try:
        await client.call("initialize", {"client_name": "bench"})
        await asyncio.sleep(max(0.0, due[-1] - time.time()) + 5)
        deadline = time.time() + 120
        while time.time() < deadline:
            fired = 0
            for schedule_id in ids:
                history = await client.call("schedule/history", {"schedule_id": schedule_id})
                fired += bool(history["fires"])
            if fired == ONE_SHOTS:
                break
            await asyncio.sleep(1)
    finally:
        await client.close()
    conn = sqlite3.connect(data / "atrium.db")
    rows = conn.execute(
        "SELECT f.scheduled_for, f.recorded_at, r.started_at FROM schedule_fires f"
        " LEFT JOIN runs r ON r.id = f.run_id WHERE f.manual = 0"
    ).fetchall()
    conn.close()
    claims = [rec - at for at, rec, _ in rows]
    starts = [run - at for at, _, run in rows if run is not None]
    return claims, starts


def _cpu(fraction: float) -> str:
    """CPU use over the idle window; the clock-tick resolution is 10 ms per window."""
    used_ms = fraction * IDLE_WINDOW_S * 1e3
    return f"{fraction * 100:.3f}% of a core ({used_ms:.0f} ms in {IDLE_WINDOW_S:.0f} s)"


async def run() -> list[Line]:
    say(f"[{NAME}] {ACTIVE} active schedules: idle CPU, and {ONE_SHOTS} one-shots' fire latency")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        empty = await _idle_cpu(root, 0)
        full = await _idle_cpu(root, ACTIVE)
        claims, starts = await _latency(root)
    lines: list[Line] = [
        Figure(NAME, "idle CPU, no schedules", _cpu(empty)),
        Figure(NAME, f"idle CPU, {ACTIVE} schedules", _cpu(full)),
        Target(NAME, f"idle CPU with {ACTIVE} schedules (of a core)", full, CPU_LIMIT),
        Figure(NAME, f"fire → claim ({len(claims)} fires)", spread(claims)),
        Figure(NAME, "fire → run started (cron lane, cap 1)", spread(starts) if starts else "-"),
        Target(NAME, "fire → claim p99", _p99(claims) if claims else 99.0, LATENCY_LIMIT_S, "s"),
    ]
    for line in lines:
        show(line)
    return lines
