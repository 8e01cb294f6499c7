"""Store records and graph events → wire models."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from sidecar.protocol import (
    InterruptInfo,
    MessageEvent,
    MessageInfo,
    RunEventBody,
    ThreadInfo,
    ToolCallInfo,
)
from sidecar.store import InterruptRecord, MessageRecord, ThreadRecord

_INTERRUPT = TypeAdapter[InterruptInfo](InterruptInfo)
_EVENT = TypeAdapter[RunEventBody](RunEventBody)
_THREAD_STATUSES = {"idle", "running", "interrupted", "failed", "cancelled"}


def thread_info(record: ThreadRecord) -> ThreadInfo:
    status = record.status if record.status in _THREAD_STATUSES else "idle"
    return ThreadInfo(
        id=record.id,
        title=record.title,
        status=status,  # pyright: ignore[reportArgumentType]
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def message_info(record: MessageRecord) -> MessageInfo:
    return MessageInfo(
        id=record.id,
        thread_id=record.thread_id,
        role=record.role,  # pyright: ignore[reportArgumentType]
        content=record.content,
        created_at=record.created_at,
        tool_calls=tuple(
            ToolCallInfo(id=c.id, server=c.server, tool=c.tool, arguments=c.arguments)
            for c in record.tool_calls
        ),
        tool_call_id=record.tool_call_id,
        is_error=record.is_error,
    )


def interrupt_info(record: InterruptRecord) -> InterruptInfo:
    return interrupt_from_payload(record.id, record.run_id, record.payload)


def interrupt_from_payload(
    interrupt_id: str, run_id: str | None, payload: dict[str, Any]
) -> InterruptInfo:
    return _INTERRUPT.validate_python({**payload, "id": interrupt_id, "run_id": run_id})


def graph_event(chunk: dict[str, Any]) -> RunEventBody:
    """A node's custom stream event as a wire event.

    Raises:
        pydantic.ValidationError: the node emitted something the protocol does not know.
    """
    if chunk.get("type") == "message":
        return MessageEvent(message=message_info(chunk["message"]))
    return _EVENT.validate_python(chunk)
