"""thread/create, list, get, rename, delete; thread/messages (pages) and thread/search."""

from __future__ import annotations

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    Empty,
    ErrorCode,
    RpcError,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadRef,
    ThreadRenameParams,
)
from sidecar.protocol.history import (
    HistoryMessage,
    SearchHit,
    ThreadMessagesParams,
    ThreadMessagesResult,
    ThreadSearchParams,
    ThreadSearchResult,
)
from sidecar.runtime.wire import interrupt_info, message_info, thread_info
from sidecar.store import ThreadRecord
from sidecar.store.context import ContextRepo


def _listed(svc: Services, record: ThreadRecord) -> ThreadInfo:
    """The thread's wire model with its channel (one thread; `thread/list` reads all at once)."""
    channel = ContextRepo(svc.store.conn).settings(record.id).channel
    return thread_info(record).model_copy(update={"channel": channel})


@registry.method("thread/create")
async def create(svc: Services, params: ThreadCreateParams) -> ThreadInfo:
    return thread_info(svc.store.create_thread(params.title.strip() or "New thread"))


@registry.method("thread/list")
async def list_threads(svc: Services, params: Empty) -> ThreadListResult:
    del params
    channels = ContextRepo(svc.store.conn).channels()
    return ThreadListResult(
        threads=tuple(
            thread_info(t).model_copy(update={"channel": channels.get(t.id)})
            for t in svc.store.list_threads()
        )
    )


@registry.method("thread/get")
async def get(svc: Services, params: ThreadGetParams) -> ThreadGetResult:
    with typed_errors():
        record = svc.store.get_thread(params.thread_id)
    thread = _listed(svc, record)
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
        record = svc.store.rename_thread(params.thread_id, params.title.strip())
    return _listed(svc, record)


@registry.method("thread/delete")
async def delete(svc: Services, params: ThreadRef) -> Empty:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
        await svc.runs.cancel(params.thread_id)
        sub_threads = tuple(svc.store.sub_threads(params.thread_id))
        svc.store.delete_thread(params.thread_id)
    await svc.runs.forget(params.thread_id, sub_threads)
    return Empty()


@registry.method("thread/messages")
async def messages(svc: Services, params: ThreadMessagesParams) -> ThreadMessagesResult:
    """A page of the thread's messages; one cursor at most.

    Raises:
        RpcError: THREAD_NOT_FOUND; INVALID_PARAMS for two cursors or a `before_id` that names
            no message of the thread.
    """
    cursors = [c for c in (params.before_seq, params.after_seq, params.before_id) if c is not None]
    if len(cursors) > 1:
        raise RpcError(
            ErrorCode.INVALID_PARAMS, "give at most one of before_seq, after_seq, before_id"
        )
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    before_seq = params.before_seq
    if params.before_id is not None:
        before_seq = svc.store.message_seq(params.before_id, params.thread_id)
        if before_seq is None:
            raise RpcError(ErrorCode.INVALID_PARAMS, "no message with that id in the thread")
    page = svc.store.messages_page(
        params.thread_id, before_seq=before_seq, after_seq=params.after_seq, limit=params.limit
    )
    return ThreadMessagesResult(
        thread_id=params.thread_id,
        messages=tuple(
            HistoryMessage(seq=seq, message=message_info(m)) for seq, m in page.messages
        ),
        has_older=page.has_older,
        has_newer=page.has_newer,
    )


@registry.method("thread/search")
async def search(svc: Services, params: ThreadSearchParams) -> ThreadSearchResult:
    """Full-text search in one thread, newest hit first.

    Raises:
        RpcError: THREAD_NOT_FOUND.
    """
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    found = svc.store.search_messages(
        params.query,
        thread_id=params.thread_id,
        limit=params.limit + 1,
        before_seq=params.before_seq,
    )
    hits = tuple(
        SearchHit(
            message_id=h.message_id,
            seq=h.seq,
            role=h.role,
            snippet=h.snippet,
            created_at=h.created_at,
        )
        for h in found[: params.limit]
    )
    return ThreadSearchResult(
        thread_id=params.thread_id, hits=hits, has_more=len(found) > params.limit
    )
