"""thread/create, list, get, rename, delete."""

from __future__ import annotations

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    Empty,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadRef,
    ThreadRenameParams,
)
from sidecar.runtime.wire import interrupt_info, message_info, thread_info


@registry.method("thread/create")
async def create(svc: Services, params: ThreadCreateParams) -> ThreadInfo:
    return thread_info(svc.store.create_thread(params.title.strip() or "New thread"))


@registry.method("thread/list")
async def list_threads(svc: Services, params: Empty) -> ThreadListResult:
    del params
    return ThreadListResult(threads=tuple(thread_info(t) for t in svc.store.list_threads()))


@registry.method("thread/get")
async def get(svc: Services, params: ThreadGetParams) -> ThreadGetResult:
    with typed_errors():
        record = svc.store.get_thread(params.thread_id)
    thread = thread_info(record)
    messages = svc.store.recent_messages(params.thread_id, params.limit)
    interrupts = svc.store.pending_interrupts(params.thread_id)
    return ThreadGetResult(
        thread=thread,
        messages=tuple(message_info(m) for m in messages),
        interrupts=tuple(interrupt_info(i) for i in interrupts),
        status=thread.status,
        last_error=record.last_error,
    )


@registry.method("thread/rename")
async def rename(svc: Services, params: ThreadRenameParams) -> ThreadInfo:
    with typed_errors():
        return thread_info(svc.store.rename_thread(params.thread_id, params.title.strip()))


@registry.method("thread/delete")
async def delete(svc: Services, params: ThreadRef) -> Empty:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
        await svc.runs.cancel(params.thread_id)
        sub_threads = tuple(svc.store.sub_threads(params.thread_id))
        svc.store.delete_thread(params.thread_id)
    await svc.runs.forget(params.thread_id, sub_threads)
    return Empty()
