"""13. The review gate at scale: an isolated copy of a 5,000-file workspace, its changeset and
the applying of accepted files, as a snapshot and as a git worktree; and how long the event
loop stalls meanwhile.

Every step runs in a worker thread (`asyncio.to_thread`, as the gate does) while a 10 ms ticker
on the loop records how late it wakes: the loop's p90 lateness during the steps is compared with
the same ticker idle, in the same run. Target: the steps leave the loop answering within 50 ms
(p90), so ping and cancel answer while a large copy is made.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bench._report import Figure, Line, Target, ms, p90, say, show
from sidecar.plans.review.apply import apply_changes
from sidecar.plans.review.changeset import compute_changeset
from sidecar.plans.review.isolation import create_isolation, remove_isolation
from sidecar.plans.review.limits import Deadline

NAME = "review_gate"
FILES = 5_000
CHANGED = 200
ACCEPTED = 100
TICK = 0.01
LAG_LIMIT = 0.05
T = TypeVar("T")
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for n in range(FILES):
        folder = ws / f"dir{n % 50:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{n:05}.txt").write_text(f"line {n}\n" * 400)
    return ws


def _git(ws: Path, *args: str) -> None:
    env = {**os.environ, **_GIT_ENV}
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, env=env)


async def _ticker(lags: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        due = time.perf_counter() + TICK
        await asyncio.sleep(TICK)
        lags.append(max(0.0, time.perf_counter() - due))


async def _timed(step: Callable[[Deadline], T], lags: list[float]) -> tuple[T, float]:
    stop = asyncio.Event()
    ticker = asyncio.ensure_future(_ticker(lags, stop))
    started = time.perf_counter()
    try:
        value = await asyncio.to_thread(step, Deadline(600))
    finally:
        stop.set()
        await ticker
    return value, time.perf_counter() - started


async def _one_kind(kind: str, ws: Path, scratch: Path, lags: list[float]) -> list[Line]:
    made, made_s = await _timed(lambda d: create_isolation(ws, scratch / kind, d), lags)
    for n in range(CHANGED):
        path = made.folder / f"dir{n % 50:02}" / f"file{n:05}.txt"
        path.write_text(path.read_text() + "changed by the agent\n")
    changes, diff_s = await _timed(lambda d: compute_changeset(made, d), lags)
    accepted = changes.paths[:ACCEPTED]
    report, apply_s = await _timed(lambda d: apply_changes(made, accepted, d), lags)
    _, remove_s = await _timed(lambda d: remove_isolation(made, d), lags)
    assert made.kind == kind and len(changes.files) == CHANGED
    assert len(report.applied) == ACCEPTED
    text = (
        f"copy {ms(made_s)}, changeset of {CHANGED} {ms(diff_s)}, apply {ACCEPTED} "
        f"{ms(apply_s)}, remove {ms(remove_s)}"
    )
    return [Figure(NAME, f"{kind} of {FILES:,} files", text)]


async def run() -> list[Line]:
    say(f"[{NAME}] isolated copy, changeset and apply of a {FILES:,}-file workspace")
    lines: list[Line] = []
    idle: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.ensure_future(_ticker(idle, stop))
    await asyncio.sleep(1.0)
    stop.set()
    await ticker
    with tempfile.TemporaryDirectory(prefix="atrium-bench-gate-") as tmp:
        root = Path(tmp)
        ws = _workspace(root)
        busy: list[float] = []
        lines += await _one_kind("snapshot", ws, root / "iso", busy)
        if shutil.which("git") is not None:
            _git(ws, "init", "-q")
            _git(ws, "add", "-A")
            _git(ws, "commit", "-q", "-m", "bench")
            lines += await _one_kind("worktree", ws, root / "iso", busy)
    lines.append(Figure(NAME, "loop lateness idle (p90)", ms(p90(idle))))
    lines.append(
        Target(NAME, "loop lateness during the gate's steps (p90)", p90(busy), LAG_LIMIT, "s")
    )
    for line in lines:
        show(line)
    return lines
