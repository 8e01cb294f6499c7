"""Statistics and printing: medians, p90, figures and targets, the summary table."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p90(samples: Sequence[float]) -> float:
    """The 90th percentile (nearest rank), so it is always one of the samples."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def ms(seconds: float) -> str:
    if seconds < 0.001:
        return f"{seconds * 1e6:.0f} µs"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def spread(samples: Sequence[float]) -> str:
    """`median (p90, n)` of durations in seconds."""
    return f"{ms(median(samples))} (p90 {ms(p90(samples))}, n={len(samples)})"


@dataclass(frozen=True, slots=True)
class Target:
    """One target from the issue: `value` must be at most `limit`."""

    bench: str
    what: str
    value: float
    limit: float
    unit: str = "x"

    @property
    def met(self) -> bool:
        return self.value <= self.limit

    @property
    def verdict(self) -> str:
        return "PASS" if self.met else "MISS"

    def shown(self) -> str:
        if self.unit == "x":
            return f"{self.value:.2f}x (target ≤ {self.limit:g}x)"
        if self.unit == "MB":
            return f"{self.value:.1f} MB (target ≤ {self.limit:g} MB)"
        if self.unit == "%":
            return f"{self.value:.1%} (target ≤ {self.limit:.0%})"
        return f"{ms(self.value)} (target ≤ {ms(self.limit)})"


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure worth reporting that has no target of its own."""

    bench: str
    what: str
    text: str


Line = Target | Figure


def say(text: str = "") -> None:
    print(text, flush=True)


def show(line: Line) -> None:
    if isinstance(line, Target):
        say(f"  {line.what:<44} {line.shown():<34} {line.verdict}")
    else:
        say(f"  {line.what:<44} {line.text}")


def summary(lines: Sequence[Line]) -> None:
    """The final table: every figure and target of every benchmark that ran."""
    rows = [
        (
            line.bench,
            line.what,
            line.shown() if isinstance(line, Target) else line.text,
            line.verdict if isinstance(line, Target) else "",
        )
        for line in lines
    ]
    widths = [max(len(r[i]) for r in [*rows, ("bench", "figure", "value", "")]) for i in range(3)]
    say()
    say("Summary")
    rule = tuple("-" * w for w in widths)
    for row in [("bench", "figure", "value", ""), (*rule, ""), *rows]:
        cells = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3]))
        say(f"  {cells}  {row[3]}")
    targets = [line for line in lines if isinstance(line, Target)]
    missed = [t for t in targets if not t.met]
    say()
    say(
        f"{len(targets) - len(missed)} of {len(targets)} targets met"
        + (f"; missed: {', '.join(f'{t.bench}: {t.what}' for t in missed)}" if missed else "")
    )
