"""Wire methods for standing approvals (`grant/*`, the grants panel): tools the author allowed
to run without asking, in one thread, in every thread, or for one task of an approved plan.
"""

from __future__ import annotations

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.servers import Done


class GrantInfo(WireModel):
    """A standing approval: `tool` of `server` may run without asking in this thread, or in
    every thread when `thread_id` is None ("always allow"). With `plan_id` set it is a grant
    an approved plan minted for one of its tasks: it ends with the plan, and the task's changes
    inside `paths` are accepted without asking."""

    thread_id: str | None
    thread_title: str
    server: str
    tool: str
    created_at: float
    plan_id: str | None = None
    plan_goal: str | None = None
    task_id: str | None = None
    paths: tuple[str, ...] = ()


class GrantListResult(WireModel):
    grants: tuple[GrantInfo, ...]


class GrantRevokeParams(WireModel):
    """Which grant to revoke. `thread_id` has a default: the window leaves out a field that is
    None, and "always allow" (every thread) is exactly the grant whose `thread_id` is None."""

    thread_id: str | None = Field(default=None, description="None: the grant for every thread.")
    server: str
    tool: str
    plan_id: str | None = Field(default=None, description="Set: a plan's grant to its task.")
    task_id: str | None = None


GRANT_LIST = "grant/list"
GRANT_REVOKE = "grant/revoke"

GRANT_METHODS: dict[str, MethodSpec] = {
    GRANT_LIST: MethodSpec(Done, GrantListResult, "Every standing approval, across threads."),
    GRANT_REVOKE: MethodSpec(GrantRevokeParams, Done, "Revoke a standing approval."),
}
