"""4. A long thread: turn latency as one thread grows to 5,000 turns, and database bytes per turn.

In process, through the run manager (as the sidecar runs turns, minus JSON-RPC), with the real
planner and the scripted model (which also answers compaction requests, so the thread is
summarized as it outgrows the model's window, as a real one is). Every turn of the thread is a
real turn: its messages, tool call, usage, run and events are written as the sidecar writes
them, so whatever a turn reads of the thread's past is there at its real size.

Latency: a turn at turn 5,000 of one thread and a turn of a fresh thread are measured minutes
apart on a noisy machine, so at each point of the curve (turns 100, 500, 1,000, ... 5,000) the
long thread's 20 turns up to that point alternate with turns 1-20 of a new fresh thread: each
ratio compares the two measured at the same time. The target is the ratio at the last point.
`BENCH_LONG_TURNS` sets where the curve ends (default 5,000) for a quicker look.

Bytes per turn, over turns 1-20 and over turns 501-520 of the thread: the growth of the
database file plus its WAL (sizes taken after `PRAGMA wal_checkpoint(TRUNCATE)`), and the
growth of the bytes stored in its b-trees (`dbstat` payload). A turn adds about one 4 KiB page,
and inserts on random keys split pages at random, so file growth over 20 turns swings by about
±25% from one window to the next (2.9-5.5 KiB per turn over 26 windows of one thread, while the
stored bytes stayed within a few bytes of 3.8 KB per turn); the flatness target is therefore
taken on stored bytes, with file growth printed beside it, and over the whole thread.
Targets: latency at turn 5,000 <= 1.2x a fresh thread's; bytes per turn flat (<= 1.2x turn 10's).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench._inprocess import InProcess, db_bytes, in_process
from bench._proc import make_workspace
from bench._profile import Profiled, print_growth
from bench._report import Figure, Line, Target, median, ms, p90, say, show, spread
from bench.model_server import MODEL, model_server

NAME = "long_thread"
WARM_UP = 10
WINDOW = 20
CURVE = (100, 500, 1_000, 2_000, 3_000, 4_000, 5_000)
"""The long thread's turn counts at which its latency is taken (its last 20 turns up to each)."""
BYTES_LATE = 500  # the late bytes window is turns 501-520
PROFILED_TURNS = 15
LATENCY_TARGET = 1.2
BYTES_TARGET = 1.2
PROMPT = "What do my notes say?"


@dataclass
class Window:
    """Turn latencies and database growth of one thread's turns in a window."""

    latencies: list[float] = field(default_factory=list[float])
    file_growth: int = 0
    stored_growth: int | None = None

    def per_turn(self, grown: int) -> float:
        return grown / len(self.latencies)


@dataclass(frozen=True, slots=True)
class Point:
    """The long thread's last 20 turns up to `turn`, and a fresh thread's first 20 beside them:
    their latencies, and the CPU time this process spent on each (the scripted model runs in
    a process of its own, so this is the sidecar's share, less swayed by a busy machine)."""

    turn: int
    long: list[float] = field(default_factory=list[float])
    fresh: list[float] = field(default_factory=list[float])
    long_cpu: list[float] = field(default_factory=list[float])
    fresh_cpu: list[float] = field(default_factory=list[float])

    @property
    def ratio(self) -> float:
        return median(self.long) / median(self.fresh)

    @property
    def cpu_ratio(self) -> float:
        return median(self.long_cpu) / median(self.fresh_cpu)


def stored_bytes(rig: InProcess) -> int | None:
    """Bytes of records in the database's b-trees, or None when SQLite lacks `dbstat`."""
    try:
        row = rig.db.conn.execute("SELECT SUM(payload) FROM dbstat").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0])


async def _sequential(rig: InProcess, thread_id: str) -> Window:
    """A window of turns on one thread, with the database growth over the whole window."""
    window = Window()
    file_before, stored_before = db_bytes(rig.db.conn, rig.db.path), stored_bytes(rig)
    for _ in range(WINDOW):
        window.latencies.append(await rig.runtime_turn(thread_id, PROMPT))
    window.file_growth = db_bytes(rig.db.conn, rig.db.path) - file_before
    stored_after = stored_bytes(rig)
    if stored_before is not None and stored_after is not None:
        window.stored_growth = stored_after - stored_before
    return window


async def _alongside(rig: InProcess, long: str, turn: int) -> Point:
    """The long thread's turns up to `turn`, alternating with a new thread's first turns."""
    fresh = rig.store.create_thread(f"fresh {turn}").id
    point = Point(turn)
    for _ in range(WINDOW):
        for thread, latencies, cpu in (
            (fresh, point.fresh, point.fresh_cpu),
            (long, point.long, point.long_cpu),
        ):
            started = time.process_time()
            latencies.append(await rig.runtime_turn(thread, PROMPT))
            cpu.append(time.process_time() - started)
    return point


def _curve_end() -> int:
    raw = os.environ.get("BENCH_LONG_TURNS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= CURVE[0] else CURVE[-1]


async def run() -> list[Line]:
    end = _curve_end()
    points = [p for p in CURVE if p < end] + [end]
    say(f"[{NAME}] one thread grown to {end:,} turns; latency at turns {points}")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with (
            model_server() as api_base,
            in_process(root / "data", make_workspace(root / "ws"), api_base, MODEL) as rig,
        ):
            warm = rig.store.create_thread("warm-up").id
            for _ in range(WARM_UP):
                await rig.runtime_turn(warm, PROMPT)
            long = rig.store.create_thread("long").id
            start_bytes = db_bytes(rig.db.conn, rig.db.path)
            early = await _sequential(rig, long)
            turns, late, curve = WINDOW, None, list[Point]()
            for point in points:
                while turns < point - WINDOW:
                    if turns == BYTES_LATE and late is None:
                        late = await _sequential(rig, long)
                        turns += WINDOW
                        continue
                    await rig.runtime_turn(long, PROMPT)
                    turns += 1
                curve.append(await _alongside(rig, long, point))
                turns += WINDOW
                say(f"  turn {point:>5,}: {_point_text(curve[-1])}")
            fresh_turns = WINDOW * len(curve)
            grown = db_bytes(rig.db.conn, rig.db.path) - start_bytes
            whole = grown / (turns + fresh_turns)  # the fresh threads' turns count as turns
            lines = _report(curve, early, late, whole)
            if curve[-1].ratio > LATENCY_TARGET:
                await _profile(rig, long)
    return lines


def _point_text(point: Point) -> str:
    long, fresh = median(point.long), median(point.fresh)
    return (
        f"{ms(long)} (p90 {ms(p90(point.long))}) against a fresh thread's {ms(fresh)} "
        f"(p90 {ms(p90(point.fresh))}): {point.ratio:.2f}x; CPU {ms(median(point.long_cpu))} "
        f"against {ms(median(point.fresh_cpu))}: {point.cpu_ratio:.2f}x"
    )


def _report(curve: list[Point], early: Window, late: Window | None, whole: float) -> list[Line]:
    last = curve[-1]
    lines: list[Line] = [
        Figure(
            NAME,
            f"turn latency, turns {last.turn - WINDOW + 1:,}-{last.turn:,}",
            spread(last.long),
        ),
        Figure(NAME, "turn latency, fresh thread 1-20 alongside", spread(last.fresh)),
        Target(NAME, f"turn {last.turn:,} / fresh thread (same time)", last.ratio, LATENCY_TARGET),
        Figure(
            NAME,
            "curve: turn / fresh, same time",
            ", ".join(f"{p.turn:,}: {p.ratio:.2f}x" for p in curve),
        ),
        Figure(
            NAME,
            f"CPU per turn, turn {last.turn:,} / fresh",
            f"{ms(median(last.long_cpu))} / {ms(median(last.fresh_cpu))} = {last.cpu_ratio:.2f}x",
        ),
        Figure(
            NAME,
            "curve: CPU turn / fresh",
            ", ".join(f"{p.turn:,}: {p.cpu_ratio:.2f}x" for p in curve),
        ),
        Figure(NAME, "turn latency, turns 1-20 (earliest)", spread(early.latencies)),
        *_bytes_lines(early, late, whole),
    ]
    for line in lines:
        show(line)
    return lines


def _bytes_lines(early: Window, late: Window | None, whole: float) -> list[Line]:
    file_early = early.per_turn(early.file_growth)
    lines: list[Line] = [
        Figure(NAME, "DB file+WAL bytes per turn, turns 1-20", f"{file_early:,.0f} B"),
        Figure(NAME, "DB file+WAL bytes per turn, whole run", f"{whole:,.0f} B"),
    ]
    if late is None:
        return lines
    file_late = late.per_turn(late.file_growth)
    later = Figure(NAME, "DB file+WAL bytes per turn, turns 501-520", f"{file_late:,.0f} B")
    lines.insert(1, later)
    if early.stored_growth is None or late.stored_growth is None:
        ratio, what = file_late / max(file_early, 1.0), "turn 500 / turn 10 (file bytes per turn)"
    else:
        stored_early = early.per_turn(early.stored_growth)
        stored_late = late.per_turn(late.stored_growth)
        lines += [
            Figure(NAME, "stored bytes per turn, turns 1-20", f"{stored_early:,.0f} B"),
            Figure(NAME, "stored bytes per turn, turns 501-520", f"{stored_late:,.0f} B"),
        ]
        ratio, what = stored_late / max(stored_early, 1.0), "turn 500 / turn 10 (stored bytes)"
    return [*lines, Target(NAME, what, ratio, BYTES_TARGET)]


async def _profile(rig: InProcess, long: str) -> None:
    """The latency target missed: profile more alternating turns and show what grew."""
    fresh = rig.store.create_thread("fresh, profiled").id
    slow, fast = Profiled(), Profiled()
    for _ in range(PROFILED_TURNS):
        await fast.turn(lambda: rig.runtime_turn(fresh, PROMPT))
        await slow.turn(lambda: rig.runtime_turn(long, PROMPT))
    print_growth(slow, fast)
