"""Samples of the plans wire models (merged into `samples`): profiles, plans, tasks,
their methods, the plan-approval and escalation interrupts and values, and the run events."""

from __future__ import annotations

from sidecar.protocol import (
    AutonomousParams,
    CoordEmpty,
    EnvelopeInfo,
    EscalationInterrupt,
    EscalationValue,
    InterruptClosed,
    InterruptEvent,
    PlanApprovalInterrupt,
    PlanApprovalValue,
    PlanControlResult,
    PlanGetParams,
    PlanGetResult,
    PlanInfo,
    PlanListParams,
    PlanListResult,
    PlanRef,
    PlanTaskSpec,
    PlanUpdate,
    ProfileInfo,
    ProfileListResult,
    ProfileSetParams,
    RunEventBody,
    SubagentEvent,
    TaskEnvelopesResult,
    TaskEventsParams,
    TaskEventsResult,
    TaskInfo,
    TaskMessageParams,
    TaskMessageResult,
    TaskRef,
    TaskRetryResult,
    TaskUpdate,
    WireModel,
)

PROFILE = ProfileInfo(
    id="researcher",
    name="Read-only researcher",
    kind="internal",
    model="openai/gpt-4o-mini",
    tools_allowed=("workspace__read", "workspace__search"),
    tools_denied=("sandbox__*",),
    may_spawn=True,
    max_depth=2,
    concurrency=3,
    timeout=600.0,
    stall_seconds=120.0,
    max_attempts=2,
    budget_tokens=100_000,
    budget_cost=1.5,
    workdir="worktree",
)
SPEC = PlanTaskSpec(
    id="draft",
    title="Draft chapter one",
    objective="Write the opening scene ✍️",
    profile="researcher",
    depends_on=("outline",),
    success_criteria="About 2,000 words",
)
TASK = TaskInfo(
    plan_id="plan-1",
    id="draft",
    title="Draft chapter one",
    objective="Write the opening scene",
    profile="researcher",
    depends_on=("outline",),
    success_criteria="",
    status="running",
    attempt=2,
    activity="calling workspace__write",
    stalled=True,
    started_at=1.5,
    last_event_at=2.5,
    tokens_in=120,
    tokens_out=40,
    cost=0.002,
    sub_thread_id="t-sub",
    session_ref="5b0c7e1a",
)
PLAN = PlanInfo(
    id="plan-1",
    thread_id="t-1",
    goal="Chapter one",
    version=2,
    status="running",
    created_at=1.0,
    tasks=(TASK,),
)
PLAN_APPROVAL = PlanApprovalInterrupt(
    id="i-plan",
    title="Approve the plan?",
    body="Chapter one (2 tasks)",
    plan_id="plan-1",
    version=1,
    goal="Chapter one",
    tasks=(SPEC,),
    profiles=("general", "researcher"),
)
ESCALATION = EscalationInterrupt(
    id="i-esc",
    title="Task draft needs you",
    body="stalled",
    task_id="draft",
    live=True,
    plan_id="plan-1",
    reason="stalled",
    attempts=3,
    error="no event in 300s",
    profiles=("general",),
)

PLAN_SAMPLES: dict[type[WireModel], WireModel] = {
    CoordEmpty: CoordEmpty(),
    ProfileListResult: ProfileListResult(
        profiles=(PROFILE,), path="/data/profiles.json", error="profile 'x': kind: bad"
    ),
    ProfileSetParams: ProfileSetParams(profiles=(PROFILE,)),
    PlanGetParams: PlanGetParams(thread_id="t-1"),
    PlanGetResult: PlanGetResult(thread_id="t-1", autonomous=True, plans=(PLAN,)),
    TaskRef: TaskRef(thread_id="t-1", task_id="draft", plan_id="plan-1"),
    TaskRetryResult: TaskRetryResult(run_id=None),
    TaskEventsParams: TaskEventsParams(thread_id="t-1", task_id="draft", plan_id="plan-1"),
    TaskEventsResult: TaskEventsResult(
        events=(
            SubagentEvent(
                task_id="draft",
                plan_id="plan-1",
                sub_thread_id="s-1",
                event={"type": "tool_call", "call_id": "c", "server": "w", "tool": "read"},
            ),
        ),
        has_older=True,
    ),
    PlanListParams: PlanListParams(status="running", limit=20),
    PlanListResult: PlanListResult(plans=(PLAN,)),
    PlanRef: PlanRef(thread_id="t1", plan_id="p1"),
    TaskMessageParams: TaskMessageParams(thread_id="t1", task_id="a", text="Use British spelling."),
    TaskMessageResult: TaskMessageResult(
        note="Sent to task a: it reads the message before its next step."
    ),
    PlanControlResult: PlanControlResult(plan=PLAN, run_id="r2"),
    TaskEnvelopesResult: TaskEnvelopesResult(
        envelopes=(
            EnvelopeInfo(
                id="plan-1:draft:review:1",
                sender="thread/t-1/task/draft/reviewer",
                receiver="thread/t-1/task/draft",
                kind="review",
                payload={"round": 1, "verdict": "reject", "comments": "Name the bridge."},
                reply_to="plan-1:draft:draft:1",
                created_at=1.0,
            ),
        )
    ),
    AutonomousParams: AutonomousParams(thread_id="t-1", autonomous=True),
}

PLAN_EVENT_SAMPLES: list[RunEventBody] = [
    PlanUpdate(plan=PLAN),
    TaskUpdate(task=TASK),
    SubagentEvent(
        task_id="draft",
        plan_id="plan-1",
        sub_thread_id="t-sub",
        event={"type": "tool_call", "call_id": "c", "server": "workspace", "tool": "read",
               "arguments": {}},
    ),
    InterruptClosed(interrupt_id="i-esc"),
    InterruptEvent(interrupt=PLAN_APPROVAL),
    InterruptEvent(interrupt=ESCALATION),
]  # fmt: skip

PLAN_OTHER_SAMPLES: list[WireModel] = [
    PROFILE,
    SPEC,
    TASK,
    PLAN,
    PLAN_APPROVAL,
    ESCALATION,
    PlanApprovalValue(decision="approve", tasks=(SPEC,)),
    PlanApprovalValue(decision="reject", reason="not now"),
    EscalationValue(action="reassign", profile="general"),
    EscalationValue(action="abort"),
]
