"""Every wire method, declared once: its params and result models, and the method table."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sidecar.protocol.agents import AGENT_METHODS
from sidecar.protocol.budgets import BUDGET_METHODS
from sidecar.protocol.coord import COORD_METHODS
from sidecar.protocol.events import RunEventParams
from sidecar.protocol.features import FEATURE_METHODS
from sidecar.protocol.history import HISTORY_METHODS
from sidecar.protocol.memory import MEMORY_METHODS
from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import (
    InterruptInfo,
    MessageInfo,
    SettingsInfo,
    ThreadInfo,
    ThreadStatus,
    ToolInfo,
    WireModel,
)
from sidecar.protocol.queue import (
    QUEUE_METHODS,
    QUEUE_NOTIFICATIONS,
    SCHEDULE_METHODS,
    QueueMode,
)
from sidecar.protocol.routines import ROUTINE_METHODS
from sidecar.protocol.servers import SERVER_METHODS, SERVER_NOTIFICATIONS
from sidecar.protocol.skills import SKILL_METHODS

PROTOCOL_VERSION = "1.0"


class Empty(WireModel):
    """Params or result with no fields."""


class InitializeParams(WireModel):
    client_name: str
    client_version: str = ""
    protocol_version: str = PROTOCOL_VERSION


class InitializeResult(WireModel):
    protocol_version: str
    server_version: str
    data_dir: str
    model_configured: bool


class ThreadCreateParams(WireModel):
    title: str = Field(default="New thread", max_length=200)


class ThreadRef(WireModel):
    thread_id: str


class ThreadListResult(WireModel):
    threads: tuple[ThreadInfo, ...]


class ThreadGetParams(WireModel):
    thread_id: str
    limit: int = Field(default=500, ge=1, le=10_000, description="Most recent messages to return.")


class ThreadGetResult(WireModel):
    thread: ThreadInfo
    messages: tuple[MessageInfo, ...]
    interrupts: tuple[InterruptInfo, ...]
    status: ThreadStatus
    last_error: str | None = None


class ThreadRenameParams(WireModel):
    thread_id: str
    title: str = Field(min_length=1, max_length=200)


class RunStartParams(WireModel):
    thread_id: str
    text: str = Field(min_length=1, max_length=200_000)
    mode: QueueMode | None = Field(
        default=None, description="If the thread is busy: how to queue it (None: its default)."
    )


class RunRef(WireModel):
    run_id: str
    queued_id: str | None = Field(
        default=None, description="Set when the message was queued behind the running turn."
    )


class RunResumeParams(WireModel):
    thread_id: str
    interrupt_id: str
    value: dict[str, Any]


class ToolListResult(WireModel):
    tools: tuple[ToolInfo, ...]


class SettingsSetParams(WireModel):
    """Only the fields present change. `api_key` goes to the OS keyring, never to disk here;
    an empty string removes it."""

    model: str | None = None
    api_base: str | None = None
    workspace: str | None = None
    api_key: str | None = None


CORE_METHODS: dict[str, MethodSpec] = {
    "initialize": MethodSpec(InitializeParams, InitializeResult, "Handshake; first request."),
    "ping": MethodSpec(Empty, Empty, "Liveness check."),
    "shutdown": MethodSpec(Empty, Empty, "Stop runs, close servers, exit after replying."),
    "thread/create": MethodSpec(ThreadCreateParams, ThreadInfo, "Create a thread."),
    "thread/list": MethodSpec(Empty, ThreadListResult, "All threads, newest first."),
    "thread/get": MethodSpec(ThreadGetParams, ThreadGetResult, "A thread with its history."),
    "thread/rename": MethodSpec(ThreadRenameParams, ThreadInfo, "Rename a thread."),
    "thread/delete": MethodSpec(ThreadRef, Empty, "Delete a thread and everything under it."),
    "run/start": MethodSpec(RunStartParams, RunRef, "Start a turn with an author message."),
    "run/resume": MethodSpec(RunResumeParams, RunRef, "Answer a pending interrupt."),
    "run/retry": MethodSpec(ThreadRef, RunRef, "Continue a failed or cancelled turn."),
    "run/cancel": MethodSpec(ThreadRef, Empty, "Cancel the thread's running turn."),
    "tool/list": MethodSpec(Empty, ToolListResult, "Tools the agent can use."),
    "settings/get": MethodSpec(Empty, SettingsInfo, "Current settings."),
    "settings/set": MethodSpec(SettingsSetParams, SettingsInfo, "Change settings."),
}

METHODS: dict[str, MethodSpec] = {
    **CORE_METHODS,
    **SERVER_METHODS,
    **FEATURE_METHODS,
    **COORD_METHODS,
    **ROUTINE_METHODS,
    **SKILL_METHODS,
    **QUEUE_METHODS,
    **SCHEDULE_METHODS,
    **HISTORY_METHODS,
    **MEMORY_METHODS,
    **AGENT_METHODS,
    **BUDGET_METHODS,
}

NOTIFICATIONS: dict[str, type[WireModel]] = {
    "run/event": RunEventParams,
    **SERVER_NOTIFICATIONS,
    **QUEUE_NOTIFICATIONS,
}
