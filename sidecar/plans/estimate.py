"""What a plan will likely use, shown before the author approves it.

Each task is estimated from evidence: the median tokens and cost of its profile's last
succeeded tasks (`SAMPLES` of them). A profile with no history is estimated from a typical
task of its kind (a strong agent's runs are larger) and priced by its model where the price
is known. The figure is a guide, said as such: the plan's budget is what stops it.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from sidecar.llm.window import turn_cost
from sidecar.plans.dag import TaskSpec
from sidecar.plans.profiles import Profile
from sidecar.store import Store

SAMPLES = 20
TYPICAL_TOKENS = {"internal": 20_000, "strong": 80_000}
"""A task's tokens when its profile has no history yet (input-heavy: 85% prompt)."""
_PROMPT_SHARE = 0.85


@dataclass(frozen=True, slots=True)
class Estimate:
    tokens: int
    cost: float | None
    """USD; None when some task's price is unknown (its model is not in the price map)."""
    measured: int
    """How many of the tasks were estimated from their profile's history."""

    def describe(self) -> str:
        cost = f", about ${self.cost:.2f}" if self.cost is not None else ""
        basis = (
            f"{self.measured} task(s) from their profile's earlier tasks, the rest typical"
            if self.measured
            else "typical tasks of each kind: no earlier tasks of these profiles"
        )
        return f"Estimated: about {self.tokens:,} tokens{cost} ({basis})."


def estimate(
    store: Store, tasks: list[TaskSpec], profiles: dict[str, Profile], default_model: str | None
) -> Estimate:
    tokens, measured = 0, 0
    cost: float | None = 0.0
    for task in tasks:
        profile = profiles.get(task.profile)
        history = store.finished_usage(task.profile, SAMPLES)
        if history:
            measured += 1
            used = int(statistics.median(t for t, _c in history))
            priced = statistics.median(c for _t, c in history)
            task_cost: float | None = priced if priced > 0 else _price(profile, used, default_model)
        else:
            kind = "strong" if profile is not None and profile.strong else "internal"
            used = TYPICAL_TOKENS[kind]
            task_cost = _price(profile, used, default_model)
        tokens += used
        cost = None if cost is None or task_cost is None else cost + task_cost
    return Estimate(tokens, cost, measured)


def configured_model(planner: object) -> str | None:
    """The model the thread's planner is configured with, if any."""
    model = getattr(getattr(planner, "config", None), "model", None)
    return model if isinstance(model, str) else None


def _price(profile: Profile | None, tokens: int, default_model: str | None) -> float | None:
    model = (profile.model if profile is not None else None) or default_model
    if model is None:
        return None
    prompt = int(tokens * _PROMPT_SHARE)
    return turn_cost(model, prompt, tokens - prompt)
