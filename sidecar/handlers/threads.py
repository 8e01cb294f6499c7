"""thread/*: create, list, get, rename, delete; the history in pages (`thread/messages`) and its
search; a thread's budget, compaction and channel, usage and export; autonomous plans."""

from __future__ import annotations

import re
from collections.abc import Generator
from contextlib import contextmanager

from sidecar.handlers.errors import typed_errors
from sidecar.handlers.memory import memory_scope
from sidecar.handlers.queue import queue_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    THREAD_BUDGET,
    THREAD_CHECKPOINTS,
    THREAD_COMPACTION,
    THREAD_CREATE,
    THREAD_DELETE,
    THREAD_EXPORT,
    THREAD_FORK,
    THREAD_GET,
    THREAD_LIST,
    THREAD_MESSAGES,
    THREAD_RENAME,
    THREAD_REWIND,
    THREAD_SEARCH,
    THREAD_SET_AUTONOMOUS,
    THREAD_SET_BUDGET,
    THREAD_USAGE,
    AutonomousParams,
    BudgetInfo,
    CheckpointInfo,
    CompactionParams,
    CompactionResult,
    CoordEmpty,
    Empty,
    ErrorCode,
    HistoryMessage,
    LastingEffect,
    RewoundFile,
    RpcError,
    SearchHit,
    SummaryInfo,
    ThreadBudgetParams,
    ThreadBudgetResult,
    ThreadCheckpointsParams,
    ThreadCheckpointsResult,
    ThreadCreateParams,
    ThreadExportParams,
    ThreadExportResult,
    ThreadForkParams,
    ThreadForkResult,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadMessagesParams,
    ThreadMessagesResult,
    ThreadRef,
    ThreadRenameParams,
    ThreadRewindParams,
    ThreadRewindResult,
    ThreadSearchParams,
    ThreadSearchResult,
    ThreadSetBudgetParams,
    ThreadUsageParams,
    ThreadUsageResult,
    TurnUsageInfo,
    find_pattern,
)
from sidecar.runtime import rewind as rewinding
from sidecar.runtime.errors import ThreadBusyError
from sidecar.runtime.wire import interrupt_info, message_info, thread_info
from sidecar.store import ThreadRecord


def _listed(svc: Services, record: ThreadRecord) -> ThreadInfo:
    """The thread's wire model with its channel (one thread; `thread/list` reads all at once)."""
    channel = svc.store.contexts.settings(record.id).channel
    return thread_info(record).model_copy(update={"channel": channel})


@registry.method(THREAD_CREATE)
async def create(svc: Services, params: ThreadCreateParams) -> ThreadInfo:
    return thread_info(svc.store.create_thread(params.title.strip() or "New thread"))


@registry.method(THREAD_LIST)
async def list_threads(svc: Services, params: Empty) -> ThreadListResult:
    del params
    channels = svc.store.contexts.channels()
    return ThreadListResult(
        threads=tuple(
            thread_info(t).model_copy(update={"channel": channels.get(t.id)})
            for t in svc.store.list_threads()
        )
    )


@registry.method(THREAD_GET)
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


@registry.method(THREAD_RENAME)
async def rename(svc: Services, params: ThreadRenameParams) -> ThreadInfo:
    with typed_errors():
        record = svc.store.rename_thread(params.thread_id, params.title.strip())
    return _listed(svc, record)


@registry.method(THREAD_DELETE)
async def delete(svc: Services, params: ThreadRef) -> Empty:
    with typed_errors():
        svc.store.get_thread(params.thread_id)
        await svc.runs.cancel(params.thread_id)
        sub_threads = tuple(svc.store.sub_threads(params.thread_id))
        svc.store.delete_thread(params.thread_id)
    await svc.runs.forget(params.thread_id, sub_threads)
    return Empty()


@registry.method(THREAD_MESSAGES)
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


@registry.method(THREAD_SEARCH)
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
    pattern = find_pattern(params.query)
    matches = re.compile(pattern) if pattern is not None else None
    hits = tuple(
        SearchHit(
            message_id=h.message_id,
            seq=h.seq,
            role=h.role,
            snippet=h.snippet,
            created_at=h.created_at,
            matches=len(matches.findall(h.content)) if matches is not None else 0,
        )
        for h in found[: params.limit]
    )
    return ThreadSearchResult(
        thread_id=params.thread_id, hits=hits, has_more=len(found) > params.limit
    )


@registry.method(THREAD_SET_AUTONOMOUS)
async def set_autonomous(svc: Services, params: AutonomousParams) -> CoordEmpty:
    with typed_errors():
        svc.store.set_autonomous(params.thread_id, params.autonomous)
    return CoordEmpty()


def _budget_result(svc: Services, thread_id: str) -> ThreadBudgetResult:
    if not svc.store.has_thread(thread_id):
        raise RpcError(ErrorCode.THREAD_NOT_FOUND, f"thread not found: {thread_id}")
    budget = svc.store.budgets.thread_budget(thread_id)
    spent = svc.store.budgets.thread_spent(thread_id)
    return ThreadBudgetResult(
        thread_id=thread_id,
        budget=None if budget is None else BudgetInfo.model_validate(budget.fields()),
        spent_tokens=spent.tokens,
        spent_cost=spent.cost,
        cost_unknown=spent.cost_unknown,
    )


@registry.method(THREAD_BUDGET)
async def thread_budget_get(svc: Services, params: ThreadBudgetParams) -> ThreadBudgetResult:
    return _budget_result(svc, params.thread_id)


@registry.method(THREAD_SET_BUDGET)
async def thread_budget_set(svc: Services, params: ThreadSetBudgetParams) -> ThreadBudgetResult:
    """A turn of the thread that waits on the budget question still asks; the next step (or
    the answer) sees the new limits."""
    if not svc.store.has_thread(params.thread_id):
        raise RpcError(ErrorCode.THREAD_NOT_FOUND, f"thread not found: {params.thread_id}")
    svc.store.budgets.set_thread_budget(params.thread_id, params.budget_tokens, params.budget_cost)
    return _budget_result(svc, params.thread_id)


@registry.method(THREAD_COMPACTION)
async def compaction(svc: Services, params: CompactionParams) -> CompactionResult:
    mem, _ = await memory_scope(svc, params.thread_id)
    contexts = mem.contexts
    if params.mode is not None:
        contexts.set_compaction(params.thread_id, mode=params.mode)
    if params.compact_now:
        # A `/compact` turn: at once on an idle thread, right after the running turn otherwise.
        with queue_errors():
            await svc.queue.submit(params.thread_id, "/compact", "followup")
    if params.set_channel:
        contexts.set_channel(params.thread_id, (params.channel or "").strip() or None)
    current = contexts.settings(params.thread_id)
    records = contexts.summaries(params.thread_id)
    following = contexts.messages_after(params.thread_id, (s.to_seq for s in records))
    summaries = tuple(
        SummaryInfo(
            from_seq=s.from_seq,
            to_seq=s.to_seq,
            messages=s.messages,
            text=s.text,
            created_at=s.created_at,
            from_id=s.from_id,
            to_id=s.to_id,
            next_id=following.get(s.to_seq),
        )
        for s in records
    )
    return CompactionResult(
        mode=current.compaction,
        compact_next=current.compact_next,
        channel=current.channel,
        summaries=summaries,
    )


@registry.method(THREAD_USAGE)
async def usage(svc: Services, params: ThreadUsageParams) -> ThreadUsageResult:
    mem, _ = await memory_scope(svc, params.thread_id)
    turns = mem.contexts.usage(params.thread_id)
    costs = [t.cost for t in turns if t.cost is not None]
    return ThreadUsageResult(
        turns=tuple(
            TurnUsageInfo(
                turn_id=t.turn_id,
                model=t.model,
                prompt_tokens=t.prompt_tokens,
                completion_tokens=t.completion_tokens,
                cost=t.cost,
                created_at=t.created_at,
            )
            for t in turns
        ),
        prompt_tokens=sum(t.prompt_tokens for t in turns),
        completion_tokens=sum(t.completion_tokens for t in turns),
        cost=sum(costs) if costs else None,
    )


@registry.method(THREAD_EXPORT)
async def export(svc: Services, params: ThreadExportParams) -> ThreadExportResult:
    mem, _ = await memory_scope(svc, params.thread_id)
    thread = svc.store.get_thread(params.thread_id)
    from sidecar.context.export import thread_json, thread_markdown

    render = thread_markdown if params.format == "markdown" else thread_json
    content = render(svc.store, mem.contexts, thread)
    return ThreadExportResult(format=params.format, content=content)


@registry.method(THREAD_CHECKPOINTS)
async def checkpoints(svc: Services, params: ThreadCheckpointsParams) -> ThreadCheckpointsResult:
    """The thread's turns, oldest first (a rewind a crash interrupted is finished first)."""
    with typed_errors():
        await rewinding.complete_pending(svc.store)
        found = rewinding.checkpoints(svc.store, params.thread_id)
    return ThreadCheckpointsResult(
        checkpoints=tuple(
            CheckpointInfo(
                checkpoint_id=c.checkpoint_id,
                text=c.text[:120],
                created_at=c.created_at,
                files=c.files,
                undone=c.undone,
            )
            for c in found
        )
    )


@registry.method(THREAD_REWIND)
async def rewind(svc: Services, params: ThreadRewindParams) -> ThreadRewindResult:
    """Rewind or redo to a checkpoint; refused while a turn runs on the thread (`THREAD_BUSY`:
    stop it first). A paused turn's checkpoint and questions are dropped with the rewind."""
    with typed_errors(), _checkpoint_errors():
        svc.store.get_thread(params.thread_id)
        if svc.runs.is_busy(params.thread_id):
            raise ThreadBusyError(params.thread_id)
        await rewinding.complete_pending(svc.store)
        done = await rewinding.rewind(
            svc.store,
            params.thread_id,
            params.checkpoint_id,
            force=params.force,
            dry_run=params.dry_run,
        )
    if done.applied:
        svc.store.drop_pending_interrupts(params.thread_id)
        svc.store.set_thread_status(params.thread_id, "idle")
        await svc.runs.forget(params.thread_id)
    files = tuple(RewoundFile(path=r.path, status=r.status, kept_blob=r.kept) for r in done.results)
    return ThreadRewindResult(
        direction=done.plan.direction,
        applied=done.applied,
        turns=done.plan.turns,
        files=files,
        conflicts=tuple(r.path for r in done.results if r.status in ("conflict", "forced")),
        effects=tuple(
            LastingEffect(server=e.server, tool=e.tool, created_at=e.created_at)
            for e in done.effects
        ),
    )


@registry.method(THREAD_FORK)
async def fork(svc: Services, params: ThreadForkParams) -> ThreadForkResult:
    """A new thread with the history up to the checkpoint; the workspace is not changed."""
    with typed_errors(), _checkpoint_errors():
        title = svc.store.get_thread(params.thread_id).title
        new_id = rewinding.fork(
            svc.store, params.thread_id, params.checkpoint_id, f"{title} (fork)"[:200]
        )
    return ThreadForkResult(thread_id=new_id)


@contextmanager
def _checkpoint_errors() -> Generator[None]:
    try:
        yield
    except rewinding.CheckpointNotFoundError as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, "no such checkpoint on this thread") from exc
    except rewinding.RedoUnavailableError as exc:
        raise RpcError(
            ErrorCode.INVALID_PARAMS, "the thread has newer turns: this one cannot be redone"
        ) from exc
