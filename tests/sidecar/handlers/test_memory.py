"""`memory/events` gives back a thread's stored memory events, each with the message its chip
follows; `thread/compaction` names each summary's first and last message and the message after
it; `identity/get` and `identity/set` keep to the workspace and read huge files only in part.
Real services over a real SQLite file and real folders; the runs are written as the runtime
writes them."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from sidecar.context.parts import MemoryDeps, build_memory_deps
from sidecar.handlers.services import Services
from sidecar.protocol import ErrorCode, MessageEvent, RpcError, ToolResult, WireModel
from sidecar.protocol.memory import (
    MAX_IDENTITY_BYTES,
    CompactionParams,
    CompactionResult,
    ContextEvent,
    ContextItemInfo,
    IdentityFileInfo,
    IdentityGetParams,
    IdentityGetResult,
    IdentitySetParams,
    MemoryErrorCode,
    MemoryEvent,
    MemoryEventsParams,
    MemoryEventsResult,
    MemoryInfo,
)
from sidecar.runtime.wire import message_info
from sidecar.settings import Settings
from sidecar.store import Store
from sidecar.store.context import ContextRepo
from sidecar.store.records import StoredToolCall
from tests.sidecar.handlers.conftest import call
from tests.sidecar.rpc.peer import build_services

pytestmark = pytest.mark.anyio


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    services = build_services(tmp_path)
    deps = build_memory_deps(services.store)

    async def memory() -> MemoryDeps:
        return deps

    services.memory = memory
    yield services
    services.store.db.close()


def saved(key: str, text: str) -> MemoryEvent:
    info = MemoryInfo(key=key, tier="workspace", text=text, by="agent", created_at=1.0,
                      updated_at=1.0)  # fmt: skip
    return MemoryEvent(action="saved", key=key, memory=info)


class RunWriter:
    """Writes a run's messages and durable events the way the runtime's emitter does."""

    _ids = itertools.count(1)

    def __init__(self, store: Store, thread_id: str, *, question: str | None = None) -> None:
        self.store, self.thread_id = store, thread_id
        self.turn = f"turn{next(self._ids)}"
        if question is not None:
            store.add_message(thread_id, "user", question, message_id=f"{self.turn}:user")
        self.run_id = f"run-{self.turn}"
        store.create_run(self.run_id, thread_id, "start")
        self._seq = itertools.count()

    def event(self, body: WireModel, event_type: str) -> None:
        self.store.add_run_event(self.run_id, next(self._seq), event_type, body.model_dump_json())

    def message(self, role: str, text: str, message_id: str, **extra: object) -> str:
        record = self.store.add_message(
            self.thread_id,
            role,
            text,
            message_id=message_id,
            **extra,  # type: ignore[arg-type]
        )
        self.event(MessageEvent(message=message_info(record)), "message")
        return record.id

    def tool_call(self, call_id: str) -> None:
        call = StoredToolCall(id=call_id, server="memory", tool="search", arguments={})
        self.message("assistant", "", call_id, tool_calls=[call])
        self.event(ToolResult(call_id=call_id, is_error=False, content="ok"), "tool_result")
        self.message("tool", "ok", f"{call_id}:result", tool_call_id=call_id)

    def answer(self, text: str) -> str:
        return self.message("assistant", text, f"{self.turn}:answer")

    def memory(self, event: MemoryEvent) -> None:
        self.event(event, "memory")


async def test_each_memory_event_follows_the_last_row_message_of_its_turn(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Chapter").id
    run = RunWriter(svc.store, thread, question="My editor is Zofia.")
    run.tool_call("call-1")
    run.memory(saved("early", "saved before the answer"))
    answer = run.answer("Noted.")
    run.memory(saved("late", "The editor is Zofia."))
    empty = RunWriter(svc.store, thread, question="Remember tea.")
    empty.answer("")
    empty.memory(saved("tea", "Tea, no sugar."))

    result = await call(
        svc, "memory/events", MemoryEventsParams(thread_id=thread), MemoryEventsResult
    )

    assert [(e.event.key, e.after_message) for e in result.events] == [
        ("early", f"{run.turn}:user"),
        ("late", answer),
        ("tea", f"{empty.turn}:user"),
    ]
    assert [(e.run_id, e.seq) for e in result.events] == [
        (run.run_id, 3),
        (run.run_id, 5),
        (empty.run_id, 1),
    ]
    assert result.events[1].event == saved("late", "The editor is Zofia.")
    assert not result.has_older


async def test_a_run_that_saves_before_recording_anything_follows_the_authors_message(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Chapter").id
    compacting = RunWriter(svc.store, thread, question="Go on.")
    compacting.memory(saved("flushed", "saved before compaction"))
    compacting.answer("Going on.")
    resumed = RunWriter(svc.store, thread)  # a resumed persist: the answer was written before
    resumed.memory(saved("resumed", "flushed by a resumed turn"))

    result = await call(
        svc, "memory/events", MemoryEventsParams(thread_id=thread), MemoryEventsResult
    )

    assert [(e.event.key, e.after_message) for e in result.events] == [
        ("flushed", f"{compacting.turn}:user"),
        ("resumed", f"{compacting.turn}:user"),
    ]


async def test_500_turns_with_1000_memory_events_come_back_in_order_and_bounded(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Long").id
    other = svc.store.create_thread("Other").id
    expected: list[tuple[str, str]] = []
    with svc.store.transaction():
        for n in range(500):
            run = RunWriter(svc.store, thread, question=f"Fact {n}.")
            run.memory(saved(f"k{n}a", f"fact {n}"))
            answer = run.answer(f"Noted fact {n}.")
            run.memory(saved(f"k{n}b", f"fact {n} again"))
            expected += [(f"k{n}a", f"{run.turn}:user"), (f"k{n}b", answer)]
        noise = RunWriter(svc.store, other, question="Elsewhere.")
        noise.memory(saved("elsewhere", "another thread's"))

    everything = await call(
        svc, "memory/events", MemoryEventsParams(thread_id=thread), MemoryEventsResult
    )
    newest = await call(
        svc, "memory/events", MemoryEventsParams(thread_id=thread, limit=300), MemoryEventsResult
    )

    assert [(e.event.key, e.after_message) for e in everything.events] == expected
    assert not everything.has_older
    assert [(e.event.key, e.after_message) for e in newest.events] == expected[-300:]
    assert newest.has_older
    with pytest.raises(ValidationError):
        MemoryEventsParams(thread_id=thread, limit=2_001)


def report(used: int, question: str | None) -> ContextEvent:
    return ContextEvent(
        window=128_000,
        budget=120_000,
        used=used,
        tokenizer="o200k_base",
        items=(
            ContextItemInfo(kind="recent_messages", label="2 messages", tokens=used,
                            included=True, reason="recent"),
        ),
        message_id=question,
    )  # fmt: skip


async def test_each_turns_context_report_follows_the_authors_message_and_bad_ones_are_skipped(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Chapter").id
    first = RunWriter(svc.store, thread, question="My editor is Zofia.")
    first.event(report(310, f"{first.turn}:user"), "context")
    first.memory(saved("early", "saved before the answer"))
    answer = first.answer("Noted.")
    broken = RunWriter(svc.store, thread, question="And the date?")
    broken.store.add_run_event(broken.run_id, 0, "context", '{"type": "context", "used": "x"}')
    older = RunWriter(svc.store, thread, question="Before reports named their question.")
    older.tool_call("call-1")
    older.event(report(420, None), "context")  # sent after a row: still its author's message

    result = await call(
        svc, "memory/events", MemoryEventsParams(thread_id=thread), MemoryEventsResult
    )

    assert [(e.event.type, e.after_message) for e in result.events] == [
        ("context", f"{first.turn}:user"),
        ("memory", f"{first.turn}:user"),
        ("context", f"{older.turn}:user"),
    ]
    assert result.events[0].event == report(310, f"{first.turn}:user")
    assert answer == f"{first.turn}:answer"


async def test_memory_events_of_an_unknown_thread_are_refused(svc: Services) -> None:
    with pytest.raises(RpcError) as refused:
        await call(svc, "memory/events", MemoryEventsParams(thread_id="nope"), MemoryEventsResult)
    assert refused.value.code == ErrorCode.THREAD_NOT_FOUND


async def test_each_summary_names_its_range_and_the_first_row_after_it(svc: Services) -> None:
    thread = svc.store.create_thread("Chapter").id
    first = RunWriter(svc.store, thread, question="One.")
    first.answer("Answer one.")
    second = RunWriter(svc.store, thread, question="Two.")
    second.tool_call("call-2")
    second.answer("Answer two.")
    third = RunWriter(svc.store, thread, question="Three.")
    contexts = ContextRepo(svc.store.conn)
    contexts.add_summary(
        thread, from_seq=1, to_seq=2, from_id=f"{first.turn}:user",
        to_id=f"{first.turn}:answer", messages=2, text="The first turn.",
    )  # fmt: skip
    contexts.add_summary(
        thread, from_seq=3, to_seq=4, from_id=f"{second.turn}:user", to_id="call-2",
        messages=2, text="Half of the second.",
    )  # fmt: skip
    contexts.add_summary(
        thread, from_seq=1, to_seq=7, from_id=f"{first.turn}:user",
        to_id=f"{third.turn}:user", messages=7, text="Everything.",
    )  # fmt: skip

    result = await call(
        svc, "thread/compaction", CompactionParams(thread_id=thread), CompactionResult
    )

    assert [(s.from_id, s.to_id, s.next_id) for s in result.summaries] == [
        (f"{first.turn}:user", f"{first.turn}:answer", f"{second.turn}:user"),
        (f"{second.turn}:user", "call-2", f"{second.turn}:answer"),  # past the tool result
        (f"{first.turn}:user", f"{third.turn}:user", None),  # nothing after it yet
    ]


@pytest.fixture
def workspace(svc: Services, tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    svc.settings.save(Settings(workspace=str(root)))
    return root


async def _identity(svc: Services) -> dict[str, IdentityFileInfo]:
    got = await call(svc, "identity/get", IdentityGetParams(), IdentityGetResult)
    return {f.path: f for f in got.files}


async def _set_refused(svc: Services, path: str, text: str) -> int:
    params = IdentitySetParams.model_validate({"path": path, "text": text})
    with pytest.raises(RpcError) as refused:
        await call(svc, "identity/set", params, IdentityFileInfo)
    return refused.value.code


async def test_identity_set_writes_a_new_file_byte_exact_and_leaves_no_temporary_file(
    svc: Services, workspace: Path
) -> None:
    text = "Be brief.\r\nCall the river the Wend.  \n"
    params = IdentitySetParams(path=".atrium/USER.md", text=text)
    saved = await call(svc, "identity/set", params, IdentityFileInfo)

    assert saved == IdentityFileInfo(path=".atrium/USER.md", exists=True, text=text)
    assert (workspace / ".atrium" / "USER.md").read_bytes() == text.encode()
    assert sorted(p.name for p in (workspace / ".atrium").iterdir()) == ["USER.md"]
    assert (await _identity(svc))[".atrium/USER.md"].text == text


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "existing file"])
async def test_identity_set_refuses_an_atrium_folder_linked_outside_the_workspace(
    svc: Services, workspace: Path, tmp_path: Path, existing: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    if existing:
        (outside / "USER.md").write_text("private")
    os.symlink(outside, workspace / ".atrium", target_is_directory=True)

    code = await _set_refused(svc, ".atrium/USER.md", "overwritten?")

    assert code == MemoryErrorCode.IDENTITY_REFUSED
    assert {p.name: p.read_text() for p in outside.iterdir()} == (
        {"USER.md": "private"} if existing else {}
    )
    user = (await _identity(svc))[".atrium/USER.md"]
    assert (user.exists, user.text, user.error is not None) == (existing, "", existing)


async def test_identity_set_refuses_a_file_that_is_a_link_even_inside_the_workspace(
    svc: Services, workspace: Path
) -> None:
    (workspace / "CLAUDE.md").write_text("Rules.\n")
    os.symlink(workspace / "CLAUDE.md", workspace / "AGENTS.md")

    assert await _set_refused(svc, "AGENTS.md", "New rules.\n") == (
        MemoryErrorCode.IDENTITY_REFUSED
    )
    assert (workspace / "CLAUDE.md").read_text() == "Rules.\n"
    assert (workspace / "AGENTS.md").is_symlink()


@pytest.mark.parametrize("first", ["a", "é", "—"], ids=["1 byte", "2 bytes", "3 bytes"])
async def test_identity_get_reads_a_huge_file_only_to_its_bound_cut_at_a_character(
    svc: Services, workspace: Path, first: str
) -> None:
    # Four-byte characters after a shorter one: the byte bound falls inside a character.
    head = first + "𝄞" * MAX_IDENTITY_BYTES
    (workspace / ".atrium").mkdir()
    with (workspace / ".atrium" / "SOUL.md").open("wb") as handle:
        handle.write(head.encode())
        handle.truncate(64 * 2**20)  # a 64 MiB file, sparse past its head

    soul = (await _identity(svc))[".atrium/SOUL.md"]

    assert soul.truncated and soul.error is not None
    assert soul.text == first + "𝄞" * (MAX_IDENTITY_BYTES - 1)


async def test_identity_get_gives_back_whole_what_identity_set_wrote_and_cuts_longer_text(
    svc: Services, workspace: Path
) -> None:
    longest = "é" * MAX_IDENTITY_BYTES  # the most identity/set accepts: 512,000 bytes
    params = IdentitySetParams(path=".atrium/AGENT.md", text=longest)
    await call(svc, "identity/set", params, IdentityFileInfo)
    (workspace / ".atrium" / "USER.md").write_text("é" * (MAX_IDENTITY_BYTES + 1))

    files = await _identity(svc)

    agent, user = files[".atrium/AGENT.md"], files[".atrium/USER.md"]
    assert (agent.text == longest, agent.truncated, agent.error) == (True, False, None)
    assert (user.text == longest, user.truncated) == (True, True)
