"""4. A long thread: turn latency and database bytes per turn around turn 10 and turn 500.

In process, through the run manager (as the sidecar runs turns, minus JSON-RPC), with the real
planner and the scripted model.

Bytes per turn, over turns 1-20 and over turns 501-520 of one thread: the growth of the database
file plus its WAL (sizes taken after `PRAGMA wal_checkpoint(TRUNCATE)`), and the growth of the
bytes stored in its b-trees (`dbstat` payload). A turn adds about one 4 KiB page, and inserts on
random keys split pages at random, so file growth over 20 turns swings by about ±25% from one
window to the next (2.9-5.5 KiB per turn over 26 windows of one thread, while the stored bytes
stayed within a few bytes of 3.8 KB per turn); the flatness target is therefore taken on stored
bytes, with file growth printed beside it, and over the whole thread.

Latency at turn 10 and turn 500 of one thread would be measured a minute apart on a noisy
machine, so turns 481-500 of the long thread alternate with turns 1-20 of a fresh thread: the
target compares those two, measured at the same time. The one-thread sequential ratio (turns
501-520 against turns 1-20) is printed beside it.
Targets: latency at turn 500 <= 1.2x turn 10; bytes per turn flat (<= 1.2x turn 10's).
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench._inprocess import InProcess, db_bytes, in_process
from bench._proc import make_workspace
from bench._profile import Profiled, print_growth
from bench._report import Figure, Line, Target, median, say, show, spread
from bench.model_server import MODEL, model_server

NAME = "long_thread"
WARM_UP = 10
WINDOW = 20
LATE = 500  # the long thread alternates in turns 481-500, then runs 501-520 alone
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


async def _alongside(rig: InProcess, long: str, fresh: str) -> tuple[Window, Window]:
    """A window of turns alternating between two threads (latency only)."""
    slow, fast = Window(), Window()
    for _ in range(WINDOW):
        fast.latencies.append(await rig.runtime_turn(fresh, PROMPT))
        slow.latencies.append(await rig.runtime_turn(long, PROMPT))
    return slow, fast


async def run() -> list[Line]:
    say(f"[{NAME}] {LATE + WINDOW} turns on one thread; windows of {WINDOW} turns")
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
            for _ in range(WINDOW, LATE - WINDOW):
                await rig.runtime_turn(long, PROMPT)
            fresh = rig.store.create_thread("fresh").id
            slow, fast = await _alongside(rig, long, fresh)
            late = await _sequential(rig, long)
            # The fresh thread's 20 turns are in there too: count them as turns.
            whole = (db_bytes(rig.db.conn, rig.db.path) - start_bytes) / (LATE + 2 * WINDOW)
            lines = _report(early, late, slow, fast, whole)
            if median(slow.latencies) / median(fast.latencies) > LATENCY_TARGET:
                await _profile(rig, long, fresh)
    return lines


def _report(early: Window, late: Window, slow: Window, fast: Window, whole: float) -> list[Line]:
    lines: list[Line] = [
        Figure(NAME, "turn latency, turns 481-500", spread(slow.latencies)),
        Figure(NAME, "turn latency, fresh thread 1-20 alongside", spread(fast.latencies)),
        Target(
            NAME,
            "turn 500 / turn 10 (median, same time)",
            median(slow.latencies) / median(fast.latencies),
            LATENCY_TARGET,
        ),
        Figure(NAME, "turn latency, turns 1-20 (earlier)", spread(early.latencies)),
        Figure(NAME, "turn latency, turns 501-520 (later)", spread(late.latencies)),
        Figure(
            NAME,
            "later / earlier, one thread (drift included)",
            f"{median(late.latencies) / median(early.latencies):.2f}x",
        ),
        *_bytes_lines(early, late, whole),
    ]
    for line in lines:
        show(line)
    return lines


def _bytes_lines(early: Window, late: Window, whole: float) -> list[Line]:
    file_early, file_late = early.per_turn(early.file_growth), late.per_turn(late.file_growth)
    lines: list[Line] = [
        Figure(NAME, "DB file+WAL bytes per turn, turns 1-20", f"{file_early:,.0f} B"),
        Figure(NAME, "DB file+WAL bytes per turn, turns 501-520", f"{file_late:,.0f} B"),
        Figure(NAME, "DB file+WAL bytes per turn, whole run", f"{whole:,.0f} B"),
    ]
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


async def _profile(rig: InProcess, long: str, fresh: str) -> None:
    """The latency target missed: profile more alternating turns and show what grew."""
    slow, fast = Profiled(), Profiled()
    for _ in range(PROFILED_TURNS):
        await fast.turn(lambda: rig.runtime_turn(fresh, PROMPT))
        await slow.turn(lambda: rig.runtime_turn(long, PROMPT))
    print_growth(slow, fast)
