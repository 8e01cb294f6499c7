"""The `run/event` notification and its event union, discriminated on `type`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.budgets import BudgetEvent
from sidecar.protocol.context import ContextEvent
from sidecar.protocol.interrupts import InterruptInfo
from sidecar.protocol.memory import MemoryEvent
from sidecar.protocol.models import ErrorInfo, MessageInfo
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.plans import PlanInfo, SubagentEvent, TaskInfo


class RunStarted(WireModel):
    type: Literal["run_started"] = "run_started"
    resumed: bool = False


class NodeStarted(WireModel):
    type: Literal["node_started"] = "node_started"
    node: str


class NodeFinished(WireModel):
    type: Literal["node_finished"] = "node_finished"
    node: str


class Token(WireModel):
    type: Literal["token"] = "token"
    text: str


class MessageEvent(WireModel):
    type: Literal["message"] = "message"
    message: MessageInfo


class ToolCall(WireModel):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]


class ToolProgress(WireModel):
    type: Literal["tool_progress"] = "tool_progress"
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


class ToolResult(WireModel):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    is_error: bool
    content: str


class InterruptEvent(WireModel):
    type: Literal["interrupt"] = "interrupt"
    interrupt: InterruptInfo


class PlanUpdate(WireModel):
    """A plan was proposed, approved, edited, replanned or ended (its tasks included)."""

    type: Literal["plan_update"] = "plan_update"
    plan: PlanInfo


class TaskUpdate(WireModel):
    """A task changed: status, attempt, activity, usage, stall badge or result."""

    type: Literal["task_update"] = "task_update"
    task: TaskInfo


class InterruptClosed(WireModel):
    """A live interrupt can no longer be answered: the call or task that asked ended first (it
    finished, timed out or was cancelled). The inbox drops it."""

    type: Literal["interrupt_closed"] = "interrupt_closed"
    interrupt_id: str
    reason: Literal["dropped"] = "dropped"


class RunFinished(WireModel):
    """The run stopped cleanly: the turn completed, or it waits on the interrupts sent before."""

    type: Literal["run_finished"] = "run_finished"
    outcome: Literal["completed", "interrupted"] = "completed"


class RunFailed(WireModel):
    type: Literal["run_failed"] = "run_failed"
    error: ErrorInfo


class RunCancelled(WireModel):
    type: Literal["run_cancelled"] = "run_cancelled"


class ThreadRenamed(WireModel):
    """The sidecar named the thread: one still titled `DEFAULT_THREAD_TITLE` takes a title from
    the author's message when the turn it started ends (before its terminal event)."""

    type: Literal["thread_renamed"] = "thread_renamed"
    title: str


class TurnUsageEvent(WireModel):
    """The turn's tokens and cost (planner steps and compaction), and the thread's totals."""

    type: Literal["turn_usage"] = "turn_usage"
    model: str | None = None
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    thread_prompt_tokens: int
    thread_completion_tokens: int
    thread_cost: float | None = None


RunEventBody: TypeAlias = Annotated[
    RunStarted
    | NodeStarted
    | NodeFinished
    | Token
    | MessageEvent
    | ToolCall
    | ToolProgress
    | ToolResult
    | InterruptEvent
    | InterruptClosed
    | PlanUpdate
    | TaskUpdate
    | SubagentEvent
    | RunFinished
    | RunFailed
    | RunCancelled
    | ThreadRenamed
    | ContextEvent
    | MemoryEvent
    | TurnUsageEvent
    | BudgetEvent,
    Field(discriminator="type"),
]
TERMINAL_EVENT_TYPES = frozenset({"run_finished", "run_failed", "run_cancelled"})


class RunEventParams(WireModel):
    """Params of the `run/event` notification. `seq` increases by one per run, from 0.

    `background`: the run is a delegated plan working in the background of its thread (its
    tasks' updates, questions and results), not a turn: the thread's own turns go on beside it.
    """

    run_id: str
    thread_id: str
    seq: int
    event: RunEventBody
    background: bool = False


RUN_EVENT = "run/event"
