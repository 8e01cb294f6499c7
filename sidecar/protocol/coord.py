"""Wire methods for subagents and the coordinator: profiles, plans, tasks (issue 5).

Plans and tasks change while a run goes; the changes arrive as `plan_update` and `task_update`
run events, and `plan/get` returns the whole tree (thread → plans → tasks) at any time.
"""

from __future__ import annotations

from enum import IntEnum

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.plans import PlanInfo, ProfileInfo


class CoordErrorCode(IntEnum):
    """Application error codes of the coordinator methods (-32040..-32049)."""

    PROFILES_INVALID = -32040
    NO_SUCH_TASK = -32041
    TASK_NOT_RETRYABLE = -32042
    TASK_NOT_RUNNING = -32043


class CoordEmpty(WireModel):
    """No fields."""


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


class TaskRetryResult(WireModel):
    run_id: str | None = Field(
        description="The run that continues the plan, or None when the plan's run is still "
        "going and picks the task up itself."
    )


class AutonomousParams(WireModel):
    thread_id: str
    autonomous: bool = Field(description="Run plans without asking for approval first.")


COORD_METHODS: dict[str, MethodSpec] = {
    "profile/list": MethodSpec(CoordEmpty, ProfileListResult, "Subagent profiles."),
    "profile/set": MethodSpec(ProfileSetParams, ProfileListResult, "Replace the profiles."),
    "plan/get": MethodSpec(PlanGetParams, PlanGetResult, "The thread's plans and tasks."),
    "task/cancel": MethodSpec(TaskRef, CoordEmpty, "Stop a running task (its dependents skip)."),
    "task/retry": MethodSpec(TaskRef, TaskRetryResult, "Run a failed or cancelled task again."),
    "thread/set_autonomous": MethodSpec(
        AutonomousParams, CoordEmpty, "Let plans run without plan approval."
    ),
}
