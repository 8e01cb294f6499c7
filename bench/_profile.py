"""cProfile comparisons for a missed target: where does the slower case spend its extra time?"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

from bench._report import ms, say

REPO = Path(__file__).resolve().parents[1]
PROJECT = (str(REPO / "sidecar"), str(REPO / "mcp_servers"))


class Profiled:
    """One cProfile per case, enabled only around that case's turns (main thread only)."""

    def __init__(self) -> None:
        self.profile = cProfile.Profile()
        self.turns = 0

    async def turn(self, run: Callable[[], Awaitable[float]]) -> float:
        self.profile.enable()
        try:
            return await run()
        finally:
            self.profile.disable()
            self.turns += 1

    def per_turn(self) -> dict[tuple[str, int, str], float]:
        """Cumulative seconds per function per turn."""
        # pstats keeps its table in an undocumented attribute: function -> (cc, nc, tt, ct, callers)
        table = cast(
            dict[tuple[str, int, str], tuple[int, int, float, float, object]],
            getattr(pstats.Stats(self.profile), "stats"),  # noqa: B009
        )
        return {key: row[3] / max(self.turns, 1) for key, row in table.items()}


def print_growth(slow: Profiled, fast: Profiled, rows: int = 10) -> None:
    """Print the project functions whose cumulative time per turn grew the most from `fast` to
    `slow` (the profiler inflates every figure; compare them with each other)."""
    slow_t, fast_t = slow.per_turn(), fast.per_turn()
    growth = sorted(
        ((slow_t.get(k, 0.0) - fast_t.get(k, 0.0), k) for k in slow_t.keys() | fast_t.keys()),
        reverse=True,
    )
    ours = [(d, k) for d, k in growth if k[0].startswith(PROJECT)]
    say(f"  cProfile, {slow.turns} turns each: project functions by growth of cumulative time")
    say("  per turn (slow case - fast case; profiler overhead included):")
    for delta, (path, line, name) in ours[:rows]:
        where = f"{Path(path).relative_to(REPO)}:{line} {name}"
        say(f"    {'+' if delta >= 0 else ''}{ms(delta):>9}  {where}")
