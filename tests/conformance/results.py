"""Reading the suite's results: each scenario run leaves `checks.json` files (a list of checks,
each with an `id` and a `status`) under the folder given with `-o`; a scenario passes when none
of its checks is a FAILURE (the suite's own rule: warnings and skipped checks do not fail it),
apart from checks excused because they need a test fixture the server under test does not have.
Every scenario also validates each message the implementation sent against the spec's schema
(`wire-schema-valid`); a failure of that check is a wire-schema violation."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

FAILURE = "FAILURE"
WIRE_SCHEMA = "wire-schema-valid"


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's verdict: the checks that failed, by id."""

    scenario: str
    found: bool
    failed: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.found and not self.failed


def read_result(
    scenario: str, folder: Path, excused: Collection[str] = (), *, pattern: str = "**/checks.json"
) -> ScenarioResult:
    """The verdict of the scenario whose results the suite wrote under `folder` (the files
    matching `pattern` there, when other scenarios wrote theirs beside them)."""
    files = sorted(folder.glob(pattern))
    if not files:
        return ScenarioResult(scenario, found=False)
    failed: list[str] = []
    for path in files:
        try:
            checks = cast(list[dict[str, Any]], json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return ScenarioResult(scenario, found=False)
        failed += [
            str(c.get("id"))
            for c in checks
            if c.get("status") == FAILURE and str(c.get("id")) not in excused
        ]
    return ScenarioResult(scenario, found=True, failed=tuple(failed))


def wire_violations(folder: Path) -> int:
    """Failed wire-schema checks of every scenario whose results are under `folder`."""
    count = 0
    for path in folder.rglob("checks.json"):
        try:
            checks = cast(list[dict[str, Any]], json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        count += sum(c.get("id") == WIRE_SCHEMA and c.get("status") == FAILURE for c in checks)
    return count


@dataclass
class Tally:
    """The results of one run of a list of scenarios (one suite version, one target)."""

    label: str
    results: list[ScenarioResult] = field(default_factory=list[ScenarioResult])
    wire_violations: int = 0
    """Failed wire-schema checks of every scenario run, the scored ones and the others."""

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        return len(self.results)

    def failing(self) -> list[str]:
        return sorted(r.scenario for r in self.results if not r.passed)

    def line(self, floor: int | None) -> str:
        floor_text = f"  (floor {floor})" if floor is not None else ""
        wire = f"  wire-schema violations: {self.wire_violations}" if self.wire_violations else ""
        return f"{self.label:<48} {self.passed:>3} / {self.total:<3}{floor_text}{wire}"


def shortfalls(tallies: Sequence[Tally], floors: dict[str, int]) -> list[str]:
    """Why the run fails: a count below its floor, or any wire-schema violation."""
    problems: list[str] = []
    for tally in tallies:
        floor = floors.get(tally.label)
        if floor is None:
            problems.append(f"{tally.label}: no floor recorded")
        elif tally.passed < floor:
            problems.append(f"{tally.label}: {tally.passed} passed, below the floor of {floor}")
        if tally.wire_violations:
            problems.append(f"{tally.label}: {tally.wire_violations} wire-schema violation(s)")
    return problems
