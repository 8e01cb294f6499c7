"""Skills at scale: scanning 1,000 skill folders (what start-up and every change pay) and
building the budgeted listing the context offers, against a baseline in the same run (listing one
directory of 1,000 folders, the floor any scan pays).

Targets (issue): scan ≤ 200 ms; listing (assembly overhead) ≤ 10 ms.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench._report import Figure, Line, Target, median, say, show, spread
from mcp_servers.skills.catalog import default_roots, scan, signature
from mcp_servers.skills.listing import build_listing

NAME = "skills"
SKILLS = 1000
ROUNDS = 7
LISTING_BUDGET = 8000


def _write(root: Path) -> None:
    for i in range(SKILLS):
        folder = root / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Use when the author asks for task {i}; "
            f"{'it reads the tide tables and writes a harbour report. ' * 3}\n---\n"
            "# Steps\n1. Read.\n2. Write.\n",
            encoding="utf-8",
        )


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


async def run() -> list[Line]:
    say(f"[{NAME}] {SKILLS} skill folders: scan, change check, listing; {ROUNDS} rounds")
    with tempfile.TemporaryDirectory(prefix="atrium-bench-") as tmp:
        workspace = Path(tmp)
        root = workspace / ".agents" / "skills"
        _write(root)
        roots = default_roots(workspace, None)
        skills = scan(roots)
        floors = [_timed(lambda: list(os.scandir(root))) for _ in range(ROUNDS)]
        scans = [_timed(lambda: scan(roots)) for _ in range(ROUNDS)]
        checks = [_timed(lambda: signature(roots)) for _ in range(ROUNDS)]
        listings = [_timed(lambda: build_listing(skills, LISTING_BUDGET)) for _ in range(ROUNDS)]
        listing = build_listing(skills, LISTING_BUDGET)
    lines: list[Line] = [
        Figure(NAME, "baseline: list the folder", spread(floors)),
        Figure(NAME, "scan 1,000 skills (read + check)", spread(scans)),
        Target(NAME, "scan (median)", median(scans), 0.2, unit="s"),
        Figure(NAME, "change check (stat every SKILL.md)", spread(checks)),
        Target(NAME, "listing within the budget (median)", median(listings), 0.01, unit="s"),
        Figure(
            NAME,
            f"listing of {LISTING_BUDGET} chars",
            f"{len(listing.offered)} offered (shortened), {len(listing.left_out)} left out "
            "with a reason each",
        ),
    ]
    for line in lines:
        show(line)
    return lines
