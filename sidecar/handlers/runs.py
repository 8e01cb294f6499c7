"""run/start, resume, retry, cancel: reply at once with a run id; events follow.

`run/start` on a busy thread queues the message (see `sidecar.runtime.queueing`) and replies
with the busy run's id and the queued message's id."""

from __future__ import annotations

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.queue import queue_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    RUN_CANCEL,
    RUN_RESUME,
    RUN_RETRY,
    RUN_START,
    Empty,
    RunRef,
    RunResumeParams,
    RunStartParams,
    ThreadRef,
)


@registry.method(RUN_START)
async def start(svc: Services, params: RunStartParams) -> RunRef:
    with typed_errors(), queue_errors():
        run_id, queued_id = await svc.queue.submit(params.thread_id, params.text, params.mode)
    return RunRef(run_id=run_id, queued_id=queued_id)


@registry.method(RUN_RESUME)
async def resume(svc: Services, params: RunResumeParams) -> RunRef:
    with typed_errors():
        run_id = await svc.runs.resume(params.thread_id, params.interrupt_id, params.value)
    return RunRef(run_id=run_id)


@registry.method(RUN_RETRY)
async def retry(svc: Services, params: ThreadRef) -> RunRef:
    with typed_errors():
        return RunRef(run_id=await svc.runs.retry(params.thread_id))


@registry.method(RUN_CANCEL)
async def cancel(svc: Services, params: ThreadRef) -> Empty:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    await svc.runs.cancel(params.thread_id)
    return Empty()
