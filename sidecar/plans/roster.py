"""The roster: what each profile can do and whether it can take work now, as the evidence for
who gets a task.

- **Reach**: a strong agent writes unless its profile is `read_only` (then its CLI runs with
  its own read-only controls: Claude Code's permission mode, Codex's sandbox); an internal
  agent writes when its tools reach a writing tool of the workspace or the sandbox.
- **Availability**: a strong agent whose CLI the agents server reported missing (the last
  report: the plan preflight's, kept by the coordinator) is not available, with the way to
  install it.
- **Load**: the profile's runs that hold one of its `concurrency` slots now.

The planner sees one line per profile (its reach, model, tools and availability; never the load,
which changes turn by turn and would break the request's cached prefix). Where a task must go
elsewhere (its agent is not installed, or it writes and its profile cannot), `ranked` scores the
other profiles deterministically: available first, the reach the task needs, the same family
(a strong agent for a strong agent's task), the lightest load, the model's choice as the
tie-break. Escalations offer reassignment to available profiles in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

from sidecar.plans.coordinator import Coordinator
from sidecar.plans.dag import PlanError, TaskSpec
from sidecar.plans.profiles import READ_ONLY_WITHHELD, Profile
from sidecar.plans.strong import PROVIDERS

Reach: TypeAlias = Literal["read_only", "writes"]


_KIND_NAMES = {
    "internal": "Atrium subagent",
    "claude_code": "Claude Code",
    "codex": "Codex",
    "openclaw": "OpenClaw",
}


def reach(profile: Profile) -> Reach:
    if profile.strong:
        return "read_only" if profile.read_only else "writes"
    writes = any(profile.allows_tool(tool) for tool in READ_ONLY_WITHHELD)
    return "writes" if writes else "read_only"


@dataclass(frozen=True, slots=True)
class RosterEntry:
    profile: Profile
    reach: Reach
    missing: str | None = None
    """Why it cannot take work here (its CLI is not installed, and how to install it)."""
    running: int = 0

    @property
    def available(self) -> bool:
        return self.missing is None

    @property
    def load(self) -> float:
        return self.running / self.profile.concurrency

    def line(self) -> str:
        """How the planner sees the profile: stable evidence, no live load."""
        p = self.profile
        parts = [
            _KIND_NAMES[p.kind],
            "read-only" if self.reach == "read_only" else "may write",
        ]
        if p.model:
            parts.append(f"model {p.model}")
        if not p.strong and p.tools_allowed:
            parts.append("tools " + ", ".join(p.tools_allowed[:6]))
        if p.strong and p.native_tools_allowed:
            parts.append("its tools " + ", ".join(p.native_tools_allowed[:6]))
        if p.may_spawn:
            parts.append("may delegate")
        if self.missing is not None:
            parts.append("NOT AVAILABLE: not installed here")
        return f"{p.id}: {p.name} ({'; '.join(parts)})"


def roster(profiles: dict[str, Profile], coordinator: Coordinator) -> list[RosterEntry]:
    """Every profile with its reach, availability and load, in id order."""
    missing = coordinator.missing_providers
    return [
        RosterEntry(
            profile,
            reach(profile),
            missing.get(PROVIDERS.get(profile.kind, "")),
            coordinator.running(profile.id),
        )
        for _id, profile in sorted(profiles.items())
    ]


def ranked(entries: list[RosterEntry], chosen: str, *, needs: Reach | None) -> list[RosterEntry]:
    """The available profiles that can do a task first chosen for `chosen`, best first (see
    the module docstring); `needs="writes"` leaves out the read-only ones."""
    by_id = {e.profile.id: e for e in entries}
    first = by_id.get(chosen)
    strong = first is not None and first.profile.strong

    def score(entry: RosterEntry) -> tuple[int, int, float, int, str]:
        return (
            0 if entry.profile.strong == strong else 1,
            0 if entry.reach == (needs or entry.reach) else 1,
            entry.load,
            0 if entry.profile.id == chosen else 1,
            entry.profile.id,
        )

    fitting = [e for e in entries if e.available and (needs != "writes" or e.reach == "writes")]
    return sorted(fitting, key=score)


def fit_reach(
    tasks: list[TaskSpec], entries: list[RosterEntry]
) -> tuple[list[TaskSpec], dict[str, str]]:
    """Tasks that write, moved off profiles that cannot, to the best that can; returns the
    tasks and, by task id, why each moved.

    Raises:
        PlanError: a task writes and no available profile may write.
    """
    by_id = {e.profile.id: e for e in entries}
    fitted: list[TaskSpec] = []
    moved: dict[str, str] = {}
    for task in tasks:
        entry = by_id.get(task.profile)
        if not task.writes or entry is None or entry.reach == "writes":
            fitted.append(task)
            continue
        best = ranked(entries, task.profile, needs="writes")
        if not best:
            raise PlanError(f"task {task.id!r} changes files, and no available profile may write")
        target = best[0].profile
        moved[task.id] = (
            f"given to {target.id}: {entry.profile.name} is read-only and this task changes files"
        )
        fitted.append(replace(task, profile=target.id))
    return fitted, moved
