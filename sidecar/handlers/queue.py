"""queue/list, queue/edit, queue/withdraw, queue/set_mode: the messages waiting on a busy thread."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    QUEUE_EDIT,
    QUEUE_LIST,
    QUEUE_SET_MODE,
    QUEUE_WITHDRAW,
    ErrorCode,
    QueuedMessageInfo,
    QueueEditParams,
    QueueEmpty,
    QueueErrorCode,
    QueueListParams,
    QueueListResult,
    QueueModeParams,
    QueueRef,
    RpcError,
)
from sidecar.runtime.queueing import (
    AlreadyDeliveredError,
    NoSuchQueuedError,
    QueueFullError,
)


@contextmanager
def queue_errors() -> Generator[None]:
    """Queue failures as typed RPC errors."""
    try:
        yield
    except QueueFullError as exc:
        raise RpcError(QueueErrorCode.QUEUE_FULL, str(exc)) from exc
    except NoSuchQueuedError as exc:
        raise RpcError(QueueErrorCode.NO_SUCH_QUEUED, str(exc)) from exc
    except AlreadyDeliveredError as exc:
        raise RpcError(QueueErrorCode.ALREADY_DELIVERED, str(exc)) from exc
    except ValueError as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, str(exc)) from exc


@registry.method(QUEUE_LIST)
async def queue_list(svc: Services, params: QueueListParams) -> QueueListResult:
    desk = svc.queue
    with typed_errors():
        messages = desk.listing(params.thread_id)
    return QueueListResult(
        thread_id=params.thread_id,
        default_mode=desk.mode_for(params.thread_id),  # pyright: ignore[reportArgumentType]
        messages=tuple(messages),
    )


@registry.method(QUEUE_EDIT)
async def queue_edit(svc: Services, params: QueueEditParams) -> QueuedMessageInfo:
    with typed_errors(), queue_errors():
        return svc.queue.edit(params.thread_id, params.message_id, params.text)


@registry.method(QUEUE_WITHDRAW)
async def queue_withdraw(svc: Services, params: QueueRef) -> QueuedMessageInfo:
    with typed_errors(), queue_errors():
        return svc.queue.withdraw(params.thread_id, params.message_id)


@registry.method(QUEUE_SET_MODE)
async def queue_set_mode(svc: Services, params: QueueModeParams) -> QueueEmpty:
    with typed_errors(), queue_errors():
        svc.queue.set_mode(params.thread_id, params.mode)
    return QueueEmpty()
