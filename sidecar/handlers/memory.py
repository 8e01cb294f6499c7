"""memory/*: the Memory panel's memories and the thread's stored memory and context events.

The author's own edits go straight to the store, never asked about (the author is their source:
new text gets provenance `author`, and any change marks the memory reviewed); the agent's go
through staged writes in the graph (`sidecar.context.consent`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from sidecar import settings as settings_mod
from sidecar.handlers.errors import typed_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import (
    MEMORY_EVENTS,
    MEMORY_FORGET,
    MEMORY_LIST,
    MEMORY_UPDATE,
    MEMORY_WRITE,
    ContextEvent,
    MemoryEvent,
    MemoryEventInfo,
    MemoryEventsParams,
    MemoryEventsResult,
    MemoryInfo,
    MemoryKeyParams,
    MemoryListParams,
    MemoryListResult,
    MemoryUpdateParams,
    MemoryWriteParams,
    RpcError,
)
from sidecar.protocol import (
    MemoryErrorCode as WireCode,
)

if TYPE_CHECKING:
    from mcp_servers.memory import Memory, Scope
    from sidecar.context.parts import MemoryDeps

log = logging.getLogger(__name__)


def _workspace(svc: Services) -> Path:
    return settings_mod.resolve_workspace(svc.settings.load(), os.environ, svc.data_dir)


async def memory_scope(svc: Services, thread_id: str) -> tuple[MemoryDeps, Scope]:
    """The memory parts and the thread's memory scope (its channel, the workspace).

    Raises:
        RpcError: THREAD_NOT_FOUND, or INTERNAL_ERROR when memory is not available.
    """
    with typed_errors():
        svc.store.get_thread(thread_id)
    mem = await svc.memory()
    from sidecar.context.staging import scope_for

    channel = mem.contexts.settings(thread_id).channel
    return mem, scope_for(thread_id, channel, _workspace(svc))


@contextmanager
def _refusals() -> Generator[None]:
    from mcp_servers.memory import MemoryErrorCode, MemoryRefusal

    try:
        yield
    except MemoryRefusal as exc:
        code = (
            WireCode.NO_SUCH_MEMORY
            if exc.code is MemoryErrorCode.NOT_FOUND
            else WireCode.MEMORY_REFUSED
        )
        raise RpcError(code, str(exc), {"code": exc.code.value}) from exc


def memory_info(memory: Memory) -> MemoryInfo:
    return MemoryInfo.model_validate(memory.to_dict())


@registry.method(MEMORY_LIST)
async def list_memories(svc: Services, params: MemoryListParams) -> MemoryListResult:
    mem, scope = await memory_scope(svc, params.thread_id)
    tiers = None if params.tier is None else [params.tier]
    review = params.unreviewed
    with _refusals():
        if params.query:
            found = mem.memory.search(
                scope, params.query, tiers=tiers, limit=params.limit, unreviewed=review
            )
        else:
            found = mem.memory.recent(scope, tiers, limit=params.limit, unreviewed=review)
    return MemoryListResult(memories=tuple(memory_info(m) for m in found))


@registry.method(MEMORY_WRITE)
async def write(svc: Services, params: MemoryWriteParams) -> MemoryInfo:
    mem, scope = await memory_scope(svc, params.thread_id)
    with _refusals():
        saved = mem.memory.write(
            scope, params.tier, params.text, provenance="author", pinned=params.pinned
        )
    return memory_info(saved)


@registry.method(MEMORY_UPDATE)
async def update(svc: Services, params: MemoryUpdateParams) -> MemoryInfo:
    mem, scope = await memory_scope(svc, params.thread_id)
    reviewed = params.reviewed
    if reviewed is None and (params.text, params.pinned, params.tier) != (None, None, None):
        reviewed = True  # the author looked at it to change it
    with _refusals():
        mem.memory.visible(params.key, scope)
        changed = mem.memory.update(
            params.key,
            text=params.text,
            pinned=params.pinned,
            tier=params.tier,
            scope=scope,
            provenance="author" if params.text is not None else None,
            reviewed=reviewed,
        )
    return memory_info(changed)


@registry.method(MEMORY_FORGET)
async def forget(svc: Services, params: MemoryKeyParams) -> MemoryInfo:
    mem, scope = await memory_scope(svc, params.thread_id)
    with _refusals():
        mem.memory.visible(params.key, scope)
        return memory_info(mem.memory.forget(params.key))


@registry.method(MEMORY_EVENTS)
async def events(svc: Services, params: MemoryEventsParams) -> MemoryEventsResult:
    """The thread's stored memory and context events (the chips of earlier sessions), read from
    its runs' events: no memory parts needed."""
    with typed_errors():
        svc.store.get_thread(params.thread_id)
    stored, has_older = svc.store.memory_events(params.thread_id, params.limit)
    infos: list[MemoryEventInfo] = []
    for record in stored:
        try:
            kind = ContextEvent if record.type == "context" else MemoryEvent
            event = kind.model_validate_json(record.body)
        except ValidationError:
            log.warning(
                "skipping unreadable %s event %s/%s", record.type, record.run_id, record.seq
            )
            continue
        after = record.after_message
        if isinstance(event, ContextEvent) and event.message_id is not None:
            after = event.message_id  # the turn's own question, whatever came before it
        infos.append(
            MemoryEventInfo(run_id=record.run_id, seq=record.seq, after_message=after, event=event)
        )
    return MemoryEventsResult(events=tuple(infos), has_older=has_older)
