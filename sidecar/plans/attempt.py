"""One attempt at a task: what it is given and what it returns."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sidecar.llm.window import turn_cost
from sidecar.plans.profiles import Profile
from sidecar.store import TaskRecord
from sidecar.turn.events import SubagentActivity
from sidecar.turn.questions import Question

FailureClass = Literal["hopeless", "rate_limited", "transient"]
"""Why an attempt failed, for what to do next: `hopeless` (the agent is not installed, not
signed in, or misconfigured: retrying cannot help, the author is asked at once with the fix),
`rate_limited` (wait as the provider says, then retry), `transient` (a crash, the network:
retry with backoff). A result its check rejects is revised instead (`revise`)."""

AttemptMode = Literal["start", "retry", "continue", "resume", "revise"]
"""`revise`: the same session again after its result failed a check (`previous_error` holds
the check's reasons); counted as an attempt."""


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """`incomplete`: a clean exit with work left (a continuation follows, same session)."""

    status: Literal["success", "incomplete", "failed"]
    summary: str = ""
    error: str | None = None
    artifacts: tuple[str, ...] = ()
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    session_ref: str | None = None
    traces: tuple[tuple[str, str], ...] = ()
    """A strong agent's trace files, as (what, path): `raw` stdout and `normalized` events."""
    failure: FailureClass = "transient"
    retry_after: float | None = None
    """Seconds the provider asked to wait before another try (a rate limit)."""


@dataclass(frozen=True, slots=True)
class UsageSoFar:
    """An attempt's tokens so far, and their cost (None: some step had no known price); in and
    out apart where the attempt knows them."""

    tokens: int
    cost: float | None
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True, slots=True)
class AttemptReport:
    """What an attempt tells its runner. A report resets the stall clock, but a `heartbeat`'s
    (the agent's process lives, the agent itself did nothing: a stall is no activity of the
    agent's own); `activity` is what the task is doing now, in a line; `event` is relayed under
    the task; `usage` is charged."""

    activity: str | None = None
    event: SubagentActivity | None = None
    sub_thread_id: str | None = None
    usage: UsageSoFar | None = None
    heartbeat: bool = False
    session_ref: str | None = None
    """A strong agent's native session, once its CLI announced it."""


@dataclass(eq=False)
class AttemptContext:
    """Everything an attempt may use; `report` tells the runner of activity (resets the stall
    clock) and `ask` puts a question to the author on the task's behalf (stall clock paused)."""

    parent_thread_id: str
    task: TaskRecord
    profile: Profile
    depth: int
    mode: AttemptMode
    previous_error: str | None
    report: Callable[[AttemptReport], None]
    ask: Callable[[Question], Awaitable[dict[str, Any]]]
    started: float = field(default_factory=time.monotonic)
    tokens_in: int = 0
    tokens_out: int = 0
    # The model the attempt's steps use (to price them); the cost of the priced steps, and
    # whether every step had a known price.
    model: str | None = None
    cost: float = 0.0
    cost_known: bool = True

    def add_usage(self, usage: Mapping[str, int]) -> None:
        prompt = int(usage.get("prompt_tokens", 0) or 0)
        completion = int(usage.get("completion_tokens", 0) or 0)
        self.tokens_in += prompt
        self.tokens_out += completion
        if not (prompt or completion):
            return
        price = turn_cost(self.model, prompt, completion) if self.model else None
        if price is None:
            self.cost_known = False
        else:
            self.cost += price

    def over_budget(self) -> str | None:
        budget = self.profile.budget_tokens
        used = self.tokens_in + self.tokens_out
        if budget is not None and used > budget:
            return f"token budget exceeded: {used} > {budget}"
        return None


class BudgetExceededError(Exception):
    """The attempt used more than its profile's budget."""
