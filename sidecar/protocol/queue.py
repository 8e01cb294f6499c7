"""Wire methods for talking while a run goes: the queue of a busy thread (`queue/*`).

`run/start` on a busy thread queues the message with a `mode` (see `QueueMode`); each queued
message is a `QueuedMessageInfo` whose `status` moves queued → delivered → answered (or
withdrawn), announced by `queue/update` notifications and listed by `queue/list`.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal, TypeAlias

from pydantic import Field

from sidecar.protocol.methods_base import MethodSpec
from sidecar.protocol.models_base import WireModel

QueueMode: TypeAlias = Literal["steer", "collect", "followup", "interrupt"]
QueueStatus: TypeAlias = Literal["queued", "delivered", "answered", "withdrawn"]
MAX_QUEUED_PER_THREAD = 1000


class QueueErrorCode(IntEnum):
    """Application error codes of the queue and schedule methods (-32060..-32069)."""

    QUEUE_FULL = -32060
    NO_SUCH_QUEUED = -32061
    ALREADY_DELIVERED = -32062
    SCHEDULE_INVALID = -32063
    NO_SUCH_SCHEDULE = -32064
    AUTOMATION_INVALID = -32065


class QueuedMessageInfo(WireModel):
    id: str
    thread_id: str
    mode: QueueMode
    text: str
    status: QueueStatus
    run_id: str | None = Field(
        default=None, description="The run it was delivered to (None while queued)."
    )
    created_at: float
    delivered_at: float | None = None
    answered_at: float | None = None
    announcement: bool = Field(
        default=False,
        description="A delegated plan's report the sidecar queued, not the author's message: "
        "it is neither edited nor withdrawn.",
    )


class QueueUpdateParams(WireModel):
    """The `queue/update` notification: one queued message changed status (or text)."""

    message: QueuedMessageInfo


class QueueListParams(WireModel):
    thread_id: str


class QueueListResult(WireModel):
    thread_id: str
    default_mode: QueueMode
    messages: tuple[QueuedMessageInfo, ...] = Field(
        description="Not yet answered (queued and delivered), oldest first."
    )


class QueueEditParams(WireModel):
    thread_id: str
    message_id: str
    text: str = Field(min_length=1, max_length=200_000)


class QueueRef(WireModel):
    thread_id: str
    message_id: str


class QueueModeParams(WireModel):
    thread_id: str
    mode: QueueMode


class QueueEmpty(WireModel):
    """No fields."""


QUEUE_LIST = "queue/list"
QUEUE_EDIT = "queue/edit"
QUEUE_WITHDRAW = "queue/withdraw"
QUEUE_SET_MODE = "queue/set_mode"

QUEUE_METHODS: dict[str, MethodSpec] = {
    QUEUE_LIST: MethodSpec(QueueListParams, QueueListResult, "The thread's queued messages."),
    QUEUE_EDIT: MethodSpec(QueueEditParams, QueuedMessageInfo, "Edit a not yet delivered one."),
    QUEUE_WITHDRAW: MethodSpec(QueueRef, QueuedMessageInfo, "Withdraw a not yet delivered one."),
    QUEUE_SET_MODE: MethodSpec(QueueModeParams, QueueEmpty, "The thread's default mode."),
}

QUEUE_UPDATE = "queue/update"

QUEUE_NOTIFICATIONS: dict[str, type[WireModel]] = {
    QUEUE_UPDATE: QueueUpdateParams,
}
