"""4. A long thread: turn latency and database bytes per turn around turn 10 and turn 500.

In process, through the run manager (as the sidecar runs turns, minus JSON-RPC), with the real
planner and the scripted model. Windows of 20 turns are centred on turn 10 (turns 1-20) and turn
500 (491-510); bytes per turn is the growth of the database file plus its WAL over a window, each
measured after `PRAGMA wal_checkpoint(TRUNCATE)`, divided by the window's turns.

Turn 10 and turn 500 are necessarily measured a minute apart, so a same-time control follows:
turns 511-530 of the long thread alternate with turns 1-20 of a fresh thread.
Targets: latency at turn 500 ≤ 1.2x turn 10; bytes per turn flat (≤ 1.2x turn 10's).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench._inprocess import InProcess, db_bytes, in_process
from bench._proc import make_workspace
from bench._report import Figure, Line, Target, median, say, show, spread
from bench.model_server import MODEL, model_server

NAME = "long_thread"
WARM_UP = 10
WINDOW = 20
EARLY = range(1, WINDOW + 1)  # centred on turn 10
LATE = range(491, 491 + WINDOW)  # centred on turn 500
LATENCY_TARGET = 1.2
BYTES_TARGET = 1.2
PROMPT = "What do my notes say?"


@dataclass(frozen=True, slots=True)
class Window:
    latencies: list[float]
    bytes_per_turn: float
    live_bytes_per_turn: float


def live_bytes(rig: InProcess) -> int:
    """Bytes in pages that hold data (free-list pages excluded)."""
    conn = rig.db.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


async def _window(rig: InProcess, thread_id: str, turns: range) -> Window:
    before, live_before = db_bytes(rig.db.conn, rig.db.path), live_bytes(rig)
    latencies = [await rig.runtime_turn(thread_id, PROMPT) for _ in turns]
    after, live_after = db_bytes(rig.db.conn, rig.db.path), live_bytes(rig)
    return Window(latencies, (after - before) / len(turns), (live_after - live_before) / len(turns))


async def run() -> list[Line]:
    say(f"[{NAME}] {LATE.stop - 1} turns on one thread, windows of {WINDOW} at turns 10 and 500")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        root = Path(tmp)
        async with (
            model_server() as api_base,
            in_process(root / "data", make_workspace(root / "ws"), api_base, MODEL) as rig,
        ):
            warm = rig.store.create_thread("warm-up").id
            for _ in range(WARM_UP):
                await rig.runtime_turn(warm, PROMPT)
            thread = rig.store.create_thread("long").id
            early = await _window(rig, thread, EARLY)
            for _ in range(EARLY.stop, LATE.start):
                await rig.runtime_turn(thread, PROMPT)
            late = await _window(rig, thread, LATE)
            long_now, fresh_now = await _control(rig, thread)
    return _report(early, late, long_now, fresh_now)


async def _control(rig: InProcess, long_thread: str) -> tuple[list[float], list[float]]:
    """Alternate turns of the long thread with turns of a fresh one, at the same time."""
    fresh = rig.store.create_thread("fresh").id
    long_now: list[float] = []
    fresh_now: list[float] = []
    for _ in range(WINDOW):
        fresh_now.append(await rig.runtime_turn(fresh, PROMPT))
        long_now.append(await rig.runtime_turn(long_thread, PROMPT))
    return long_now, fresh_now


def _report(
    early: Window, late: Window, long_now: list[float], fresh_now: list[float]
) -> list[Line]:
    lines: list[Line] = [
        Figure(NAME, "turn latency around turn 10", spread(early.latencies)),
        Figure(NAME, "turn latency around turn 500", spread(late.latencies)),
        Target(
            NAME,
            "turn 500 / turn 10 (median latency)",
            median(late.latencies) / median(early.latencies),
            LATENCY_TARGET,
        ),
        Figure(
            NAME,
            "same time: turns 511-530 / fresh thread 1-20",
            f"{median(long_now) / median(fresh_now):.2f}x "
            f"({spread(long_now)} vs {spread(fresh_now)})",
        ),
        Figure(NAME, "DB bytes per turn around turn 10", _bytes(early)),
        Figure(NAME, "DB bytes per turn around turn 500", _bytes(late)),
        Target(
            NAME,
            "turn 500 / turn 10 (DB bytes per turn)",
            late.bytes_per_turn / max(early.bytes_per_turn, 1.0),
            BYTES_TARGET,
        ),
    ]
    for line in lines:
        show(line)
    return lines


def _bytes(window: Window) -> str:
    return (
        f"{window.bytes_per_turn:,.0f} B file+WAL "
        f"({window.live_bytes_per_turn:,.0f} B in live pages)"
    )
