"""memory/*, identity/*, thread/compaction, thread/usage and thread/export.

The author's own edits go straight to the store (the author is their source); the agent's go
through staged writes in the graph. Identity files are read and written off the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from sidecar import settings as settings_mod
from sidecar.context.identity import IDENTITY_FILES, read_head
from sidecar.handlers.errors import typed_errors
from sidecar.handlers.queue import queue_errors
from sidecar.handlers.registry import registry
from sidecar.handlers.services import Services
from sidecar.protocol import ErrorCode, RpcError
from sidecar.protocol.memory import (
    MAX_IDENTITY_BYTES,
    CompactionParams,
    CompactionResult,
    ContextEvent,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
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
    SummaryInfo,
    ThreadExportParams,
    ThreadExportResult,
    ThreadUsageParams,
    ThreadUsageResult,
    TurnUsageInfo,
)
from sidecar.protocol.memory import (
    MemoryErrorCode as WireCode,
)

if TYPE_CHECKING:
    from mcp_servers.memory import Memory, Scope
    from sidecar.context.parts import MemoryDeps

log = logging.getLogger(__name__)

IO_DEADLINE_S = 10.0
IDENTITY_PATHS = tuple(path for group in IDENTITY_FILES for path in group)


async def _memory(svc: Services) -> MemoryDeps:
    """The memory parts (LangGraph's store is imported on first use, not at start-up)."""
    if svc.memory is None:
        raise RpcError(ErrorCode.INTERNAL_ERROR, "memory is not available")
    return await svc.memory()


def _workspace(svc: Services) -> Path:
    return settings_mod.resolve_workspace(svc.settings.load(), os.environ, svc.data_dir)


async def _scope(svc: Services, thread_id: str) -> tuple[MemoryDeps, Scope]:
    with typed_errors():
        svc.store.get_thread(thread_id)
    mem = await _memory(svc)
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


@registry.method("memory/list")
async def list_memories(svc: Services, params: MemoryListParams) -> MemoryListResult:
    mem, scope = await _scope(svc, params.thread_id)
    tiers = None if params.tier is None else [params.tier]
    with _refusals():
        if params.query:
            found = mem.memory.search(scope, params.query, tiers=tiers, limit=params.limit)
        else:
            found = mem.memory.recent(scope, tiers, limit=params.limit)
    return MemoryListResult(memories=tuple(memory_info(m) for m in found))


@registry.method("memory/write")
async def write(svc: Services, params: MemoryWriteParams) -> MemoryInfo:
    mem, scope = await _scope(svc, params.thread_id)
    with _refusals():
        saved = mem.memory.write(scope, params.tier, params.text, by="author", pinned=params.pinned)
    return memory_info(saved)


@registry.method("memory/update")
async def update(svc: Services, params: MemoryUpdateParams) -> MemoryInfo:
    mem, scope = await _scope(svc, params.thread_id)
    with _refusals():
        mem.memory.visible(params.key, scope)
        changed = mem.memory.update(
            params.key, text=params.text, pinned=params.pinned, tier=params.tier, scope=scope
        )
    return memory_info(changed)


@registry.method("memory/forget")
async def forget(svc: Services, params: MemoryKeyParams) -> MemoryInfo:
    mem, scope = await _scope(svc, params.thread_id)
    with _refusals():
        mem.memory.visible(params.key, scope)
        return memory_info(mem.memory.forget(params.key))


@registry.method("memory/events")
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


@registry.method("identity/get")
async def identity_get(svc: Services, params: IdentityGetParams) -> IdentityGetResult:
    del params
    root = _workspace(svc)
    files = await asyncio.wait_for(asyncio.to_thread(_read_all, root), IO_DEADLINE_S)
    return IdentityGetResult(workspace=str(root), files=files)


def _read_all(root: Path) -> tuple[IdentityFileInfo, ...]:
    """The identity files of `root` as the Memory panel edits them (blocking). A file longer
    than `identity/set` accepts is read only to that length and marked `truncated`."""
    infos: list[IdentityFileInfo] = []
    for relative in IDENTITY_PATHS:
        path = root / relative
        name = cast(Any, relative)
        if not path.exists() and not path.is_symlink():
            infos.append(IdentityFileInfo(path=name, exists=False))
            continue
        try:
            real = _confined(root, path)
            if not real.is_file():
                raise ValueError("it is not a regular file")
            text, cut = _editable(real)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            error = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
            infos.append(IdentityFileInfo(path=name, exists=True, error=error))
            continue
        note = (
            f"longer than {MAX_IDENTITY_BYTES} characters: only its start is shown, and saving "
            "it here would replace the whole file with what is shown"
            if cut
            else None
        )
        infos.append(IdentityFileInfo(path=name, exists=True, text=text, truncated=cut, error=note))
    return tuple(infos)


def _editable(path: Path) -> tuple[str, bool]:
    """The start of the file that `identity/set` could write back (at most
    `MAX_IDENTITY_BYTES` characters, so at most four bytes each are read), and whether the file
    is longer.

    Raises:
        OSError: the file cannot be read.
        UnicodeDecodeError: it is not UTF-8 text.
    """
    text, cut = read_head(path, 4 * MAX_IDENTITY_BYTES)
    if len(text) > MAX_IDENTITY_BYTES:
        return text[:MAX_IDENTITY_BYTES], True
    return text, cut


def _confined(root: Path, path: Path) -> Path:
    """Raises:
    ValueError: the path is a broken or looping link, or leads outside the workspace."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ValueError("it is a broken or looping link") from exc
    if not real.is_relative_to(root.resolve()):
        raise ValueError("it is a link to a file outside the workspace")
    return real


@registry.method("identity/set")
async def identity_set(svc: Services, params: IdentitySetParams) -> IdentityFileInfo:
    root = _workspace(svc)
    try:
        await asyncio.wait_for(
            asyncio.to_thread(_write, root, params.path, params.text), IO_DEADLINE_S
        )
    except (OSError, ValueError) as exc:
        raise RpcError(WireCode.IDENTITY_REFUSED, f"{params.path}: {exc}") from exc
    return IdentityFileInfo(path=params.path, exists=True, text=params.text)


def _write(root: Path, relative: str, text: str) -> None:
    """Write an identity file of the workspace `root` whole, through a temporary file
    (blocking). Nothing on the way may be a link: a linked `.atrium` folder or file could lead
    anywhere, whether or not the file exists yet.

    Raises:
        ValueError: a folder or the file on the way is a link or not what it should be, or the
            file would land outside the workspace.
        OSError: the file system refused.
    """
    real_root = root.resolve(strict=True)
    *folders, name = Path(relative).parts
    parent = real_root
    for folder in folders:
        parent = parent / folder
        if parent.is_symlink():
            raise ValueError(f"{folder} is a link; identity files are written in real folders only")
        parent.mkdir(exist_ok=True)
    target = parent / name
    if target.is_symlink():
        raise ValueError("it is a link; only a regular file is written")
    if target.exists() and not target.is_file():
        raise ValueError("it is not a regular file")
    if not parent.resolve(strict=True).is_relative_to(real_root):
        raise ValueError("it would be written outside the workspace")
    temporary = parent / f".{name}.{secrets.token_hex(6)}.tmp"
    # O_EXCL: a link planted at the temporary name is never followed.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    done = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(temporary, target)
        done = True
    finally:
        if not done:
            temporary.unlink(missing_ok=True)


@registry.method("thread/compaction")
async def compaction(svc: Services, params: CompactionParams) -> CompactionResult:
    mem, _ = await _scope(svc, params.thread_id)
    contexts = mem.contexts
    if params.mode is not None:
        contexts.set_compaction(params.thread_id, mode=params.mode)
    if params.compact_now and svc.queue is not None:
        # A `/compact` turn: at once on an idle thread, right after the running turn otherwise.
        with queue_errors():
            await svc.queue.submit(params.thread_id, "/compact", "followup")
    elif params.compact_now:  # no message queue (an app without one): at the next turn
        contexts.set_compaction(params.thread_id, compact_next=True)
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


@registry.method("thread/usage")
async def usage(svc: Services, params: ThreadUsageParams) -> ThreadUsageResult:
    mem, _ = await _scope(svc, params.thread_id)
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


@registry.method("thread/export")
async def export(svc: Services, params: ThreadExportParams) -> ThreadExportResult:
    mem, _ = await _scope(svc, params.thread_id)
    thread = svc.store.get_thread(params.thread_id)
    from sidecar.context.export import thread_json, thread_markdown

    render = thread_markdown if params.format == "markdown" else thread_json
    content = render(svc.store, mem.contexts, thread)
    return ThreadExportResult(format=params.format, content=content)
