"""Preflight: before a plan is shown for approval, each task's strong agent is checked to be
installed here (the agents server's `agent_providers` report), so a plan that names a missing
CLI is refused at validation with the way to fix it, not approved and then failed.

Only a definite "not installed" refuses: when the report cannot be had (the agents server is
still starting, or down), the plan goes on and a missing CLI fails its first attempt as a
hopeless failure, put to the author at once.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from sidecar.host.host import ServerUnavailableError
from sidecar.host.types import UnknownToolError
from sidecar.plans.dag import PlanError, TaskSpec
from sidecar.plans.deps import PlanDeps
from sidecar.plans.profiles import Profile
from sidecar.plans.roster import ranked, reach, roster
from sidecar.plans.strong import PROVIDERS

log = logging.getLogger(__name__)

PROVIDERS_TOOL = "agents__agent_providers"
STARTING_WAIT_S = 5.0


async def check_agents(deps: PlanDeps, tasks: list[TaskSpec]) -> None:
    """Raises:
    PlanError: a task's strong agent is not installed here (the message says how to fix it)."""
    profiles = deps.profiles()
    wanted: dict[str, list[tuple[TaskSpec, Profile]]] = {}
    for task in tasks:
        profile = profiles.get(task.profile)
        if profile is not None and profile.kind in PROVIDERS:
            wanted.setdefault(PROVIDERS[profile.kind], []).append((task, profile))
    if not wanted:
        return
    missing = await _missing(deps)
    if missing is None:
        return
    deps.coordinator.missing_providers = missing
    problems = [
        f"task {task.id!r}: {profile.name} is not installed here ({missing[provider]})"
        + _instead(deps, profile)
        for provider, uses in wanted.items()
        if provider in missing
        for task, profile in uses
    ]
    if problems:
        raise PlanError("; ".join(problems) + ". Install it, or give the task another profile.")


def _instead(deps: PlanDeps, profile: Profile) -> str:
    """The available profiles that could take the task instead, best first."""
    entries = roster(deps.profiles(), deps.coordinator)
    others = [e.profile.id for e in ranked(entries, profile.id, needs=reach(profile))][:3]
    return f"; available instead: {', '.join(others)}" if others else ""


async def _missing(deps: PlanDeps) -> dict[str, str] | None:
    """Provider → how to install it, for each CLI the agents server reports missing (None:
    no report could be had)."""
    try:
        await deps.host.wait_ready()
        await deps.host.wait_starting(STARTING_WAIT_S)
        outcome = await deps.host.call(PROVIDERS_TOOL, {})
    except (UnknownToolError, ServerUnavailableError) as exc:
        log.info("no provider report before plan approval: %s", exc)
        return None
    rows = cast(list[Any], (outcome.structured or {}).get("providers") or [])
    found: dict[str, str] = {}
    for row in rows:
        if isinstance(row, dict):
            data = cast(dict[str, Any], row)
            if data.get("installed") is False and isinstance(data.get("provider"), str):
                found[data["provider"]] = str(data.get("hint") or "its CLI was not found")
    return found
