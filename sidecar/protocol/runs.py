"""Wire methods that start and steer a thread's turn (`run/*`). Each replies at once with a
`run_id`; the turn's progress streams as `run/event` notifications (see `events`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models import Empty
from sidecar.protocol.models_base import WireModel
from sidecar.protocol.queue import QueueMode
from sidecar.protocol.threads import ThreadRef


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


RUN_START = "run/start"
RUN_RESUME = "run/resume"
RUN_RETRY = "run/retry"
RUN_CANCEL = "run/cancel"

RUN_METHODS: dict[str, MethodSpec] = {
    RUN_START: MethodSpec(RunStartParams, RunRef, "Start a turn with an author message."),
    RUN_RESUME: MethodSpec(RunResumeParams, RunRef, "Answer a pending interrupt."),
    RUN_RETRY: MethodSpec(ThreadRef, RunRef, "Continue a failed or cancelled turn."),
    RUN_CANCEL: MethodSpec(ThreadRef, Empty, "Cancel the thread's running turn."),
}
