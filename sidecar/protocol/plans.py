"""Subagent profiles, task plans and their tasks as they cross the wire (issue 5): the
`profile/*`, `plan/*` and `task/*` methods.

A *profile* says how a subagent runs (configured in `profiles.json` in the data dir, never
coded). A *plan* is a DAG of tasks proposed by the planner (or `/plan`), approved by the author
unless the thread is autonomous, and run by the coordinator; every replan bumps its `version`.
Plans and tasks change while a run goes; the changes arrive as `plan_update` and `task_update`
run events, and `plan/get` returns the whole tree (thread → plans → tasks) at any time.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

ProfileKind: TypeAlias = Literal["internal", "claude_code", "codex", "openclaw"]
WorkdirPolicy: TypeAlias = Literal["workspace", "fresh", "worktree"]
TaskStatus: TypeAlias = Literal[
    "pending", "running", "waiting", "succeeded", "failed", "cancelled", "skipped"
]
PlanStatus: TypeAlias = Literal[
    "awaiting_approval",
    "running",
    "paused",
    "completed",
    "failed",
    "aborted",
    "rejected",
    "superseded",
]
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class CoordErrorCode(IntEnum):
    """Application error codes of the coordinator methods (-32040..-32049)."""

    PROFILES_INVALID = -32040
    NO_SUCH_TASK = -32041
    TASK_NOT_RETRYABLE = -32042
    TASK_NOT_RUNNING = -32043
    NO_SUCH_PLAN = -32044
    PLAN_NOT_RUNNING = -32045
    """Pause or cancel of a plan that is not running (or paused, for cancel)."""
    PLAN_NOT_PAUSED = -32046
    MESSAGE_REFUSED = -32047
    """task/message: the task has ended, or its agent takes no input while it works."""


class CoordEmpty(WireModel):
    """No fields."""


class ProfileInfo(WireModel):
    """How one kind of subagent runs. Tool patterns are shell-style globs on `<server>__<tool>`;
    an empty allow list allows every tool the deny list does not name."""

    id: str = Field(pattern=ID_PATTERN)
    name: str = Field(min_length=1, max_length=100)
    kind: ProfileKind = "internal"
    model: str | None = Field(default=None, description="LiteLLM model; None: the thread's.")
    tools_allowed: tuple[str, ...] = ()
    tools_denied: tuple[str, ...] = ()
    may_spawn: bool = Field(default=False, description="May delegate work of its own.")
    max_depth: int = Field(default=1, ge=1, le=5, description="Nesting depth it may run at.")
    concurrency: int = Field(default=4, ge=1, le=64, description="Runs of it at once.")
    timeout: float = Field(default=1800.0, gt=0, description="Seconds per attempt.")
    stall_seconds: float = Field(
        default=300.0, gt=0, description="Seconds without an event before a run counts stalled."
    )
    max_attempts: int = Field(default=3, ge=1, le=10)
    budget_tokens: int | None = Field(default=None, ge=1)
    budget_cost: float | None = Field(default=None, gt=0)
    workdir: WorkdirPolicy = "workspace"
    skills_allowed: tuple[str, ...] = Field(
        default=(), description="Skill-name globs offered to it (empty: every skill)."
    )
    skills_denied: tuple[str, ...] = Field(
        default=(), description="Skill-name globs never offered."
    )
    read_only: bool = Field(
        default=False,
        description="Its agent changes nothing (a strong agent's CLI runs read-only).",
    )
    native_tools_allowed: tuple[str, ...] = Field(
        default=(), description="A strong agent's own tool rules its CLI allows (Claude Code)."
    )
    native_tools_denied: tuple[str, ...] = Field(
        default=(), description="A strong agent's own tool rules its CLI refuses."
    )


class PlanTaskSpec(WireModel):
    """One task as proposed (and as the author may edit it before approving)."""

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1, max_length=200)
    objective: str = Field(min_length=1, max_length=20_000)
    profile: str
    depends_on: tuple[str, ...] = ()
    success_criteria: str = ""
    optional: bool = Field(
        default=False, description="Cut (skipped) if the plan's budget is 80% spent first."
    )
    writes: bool = Field(
        default=False, description="It changes files: only a profile that may write takes it."
    )


class TaskInfo(WireModel):
    plan_id: str
    id: str
    title: str
    objective: str
    profile: str
    depends_on: tuple[str, ...]
    success_criteria: str
    optional: bool = False
    status: TaskStatus
    attempt: int = Field(description="Attempts started so far (continuations not counted).")
    activity: str | None = Field(default=None, description="What it is doing now, in a line.")
    stalled: bool = False
    started_at: float | None = None
    finished_at: float | None = None
    last_event_at: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    sub_thread_id: str | None = None
    session_ref: str | None = Field(default=None, description="A strong agent's session id.")
    summary: str | None = Field(default=None, description="The task's final result, shortened.")
    error: str | None = None


class ReplacedTaskInfo(WireModel):
    """A task an earlier version of the plan had, which a replan replaced after it ran or
    ended (failed, skipped, cancelled): kept as it stood then."""

    version: int = Field(description="The plan's version the task belonged to.")
    task: TaskInfo


class PlanInfo(WireModel):
    id: str
    thread_id: str
    goal: str
    version: int
    status: PlanStatus
    created_at: float
    tasks: tuple[TaskInfo, ...]
    replaced: tuple[ReplacedTaskInfo, ...] = Field(
        default=(), description="Tasks of earlier versions a replan replaced, oldest first."
    )
    budget_tokens: int | None = Field(
        default=None, description="The plan's token budget (`budget_tokens` in its JSON)."
    )
    spent_tokens: int = Field(default=0, description="Tokens its tasks have spent (recorded).")
    remaining_tokens: int | None = Field(default=None, description="Budget left; None: no budget.")
    budget_warned: bool = Field(default=False, description="80% of the budget is spent.")
    budget_cost: float | None = Field(
        default=None, description="The plan's cost budget in USD (`budget_cost` in its JSON)."
    )
    spent_cost: float = Field(default=0.0, description="USD its tasks have spent (priced part).")
    remaining_cost: float | None = Field(default=None, description="USD left; None: no limit.")
    cost_unknown: bool = Field(default=False, description="Some task usage has no known price.")


class ProfileListResult(WireModel):
    profiles: tuple[ProfileInfo, ...]
    path: str = Field(description="The profiles file in the data dir.")
    error: str | None = Field(
        default=None, description="Why the file could not be used (the defaults apply)."
    )


class ProfileSetParams(WireModel):
    """Replace every profile. Ids must be unique; at least one profile."""

    profiles: tuple[ProfileInfo, ...] = Field(min_length=1, max_length=100)


class PlanGetParams(WireModel):
    thread_id: str


class PlanGetResult(WireModel):
    thread_id: str
    autonomous: bool
    plans: tuple[PlanInfo, ...] = Field(description="Newest last; one per plan version chain.")


class TaskRef(WireModel):
    thread_id: str
    task_id: str
    plan_id: str | None = Field(default=None, description="None: the thread's newest plan.")


class TaskMessageParams(WireModel):
    thread_id: str
    task_id: str
    plan_id: str | None = Field(default=None, description="None: the thread's newest plan.")
    text: str = Field(min_length=1, max_length=20_000)


class TaskMessageResult(WireModel):
    note: str = Field(description="How the task will read it, in a sentence.")


class PlanRef(WireModel):
    thread_id: str
    plan_id: str


class PlanControlResult(WireModel):
    plan: PlanInfo
    run_id: str | None = Field(
        default=None, description="plan/resume: the background run that goes on with it."
    )


class EnvelopeInfo(WireModel):
    """A message between agents of a plan: a task's result (`final`, `error`), a draft
    (`artifact`) and its review (`review`, with a verdict), the main agent's message to a task
    (`message`), a handoff to another profile (`handoff`). `reply_to` names the envelope it
    answers."""

    id: str
    sender: str
    receiver: str
    kind: str
    payload: dict[str, Any]
    artifacts: tuple[str, ...] = ()
    reply_to: str | None = None
    created_at: float
    acked_at: float | None = None


class TaskEnvelopesResult(WireModel):
    envelopes: tuple[EnvelopeInfo, ...] = Field(description="Oldest first.")


class SubagentEvent(WireModel):
    """An event of a subagent's own run, nested under its task. `event` is a run event body
    (same shapes as this union: token, tool_call, tool_progress, tool_result, message, ...); a
    strong agent's normalized events arrive as `tool_progress` of its agents call."""

    type: Literal["subagent_event"] = "subagent_event"
    task_id: str
    plan_id: str | None = None
    sub_thread_id: str | None = None
    event: dict[str, Any]


class TaskEventsParams(WireModel):
    thread_id: str
    task_id: str
    plan_id: str
    limit: int = Field(default=500, ge=1, le=2000)


class TaskEventsResult(WireModel):
    """A task's stored events (what its agent did), oldest first: they come back after the
    thread is reopened and after a restart."""

    events: tuple[SubagentEvent, ...]
    has_older: bool = False


class PlanListParams(WireModel):
    status: PlanStatus | None = Field(default=None, description="None: plans in any status.")
    limit: int = Field(default=200, ge=1, le=1000)


class PlanListResult(WireModel):
    """Plans of every thread (not of subagents' sub-threads), newest first."""

    plans: tuple[PlanInfo, ...]


class TaskRetryResult(WireModel):
    run_id: str | None = Field(
        description="The run that continues the plan, or None when the plan's run is still "
        "going and picks the task up itself."
    )


PROFILE_LIST = "profile/list"
PROFILE_SET = "profile/set"
PLAN_GET = "plan/get"
TASK_CANCEL = "task/cancel"
TASK_RETRY = "task/retry"
TASK_ENVELOPES = "task/envelopes"
TASK_EVENTS = "task/events"
PLAN_LIST = "plan/list"
TASK_MESSAGE = "task/message"
PLAN_PAUSE = "plan/pause"
PLAN_RESUME = "plan/resume"
PLAN_CANCEL = "plan/cancel"

PLAN_METHODS: dict[str, MethodSpec] = {
    PROFILE_LIST: MethodSpec(CoordEmpty, ProfileListResult, "Subagent profiles."),
    PROFILE_SET: MethodSpec(ProfileSetParams, ProfileListResult, "Replace the profiles."),
    PLAN_GET: MethodSpec(PlanGetParams, PlanGetResult, "The thread's plans and tasks."),
    TASK_CANCEL: MethodSpec(TaskRef, CoordEmpty, "Stop a running task (its dependents skip)."),
    TASK_RETRY: MethodSpec(TaskRef, TaskRetryResult, "Run a failed or cancelled task again."),
    TASK_EVENTS: MethodSpec(TaskEventsParams, TaskEventsResult, "What the task's agent did."),
    PLAN_LIST: MethodSpec(PlanListParams, PlanListResult, "Plans of every thread."),
    TASK_MESSAGE: MethodSpec(
        TaskMessageParams, TaskMessageResult, "A word from the author to a running task."
    ),
    PLAN_PAUSE: MethodSpec(
        PlanRef, PlanControlResult, "Stop a running plan's work until it is resumed."
    ),
    PLAN_RESUME: MethodSpec(
        PlanRef, PlanControlResult, "Go on with a paused plan (its agents where they stopped)."
    ),
    PLAN_CANCEL: MethodSpec(
        PlanRef, PlanControlResult, "End a running or paused plan; finished tasks stay."
    ),
    TASK_ENVELOPES: MethodSpec(
        TaskRef, TaskEnvelopesResult, "What the task's agents sent and were sent, whole."
    ),
}
