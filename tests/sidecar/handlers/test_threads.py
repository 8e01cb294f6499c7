"""`thread/list`, `thread/get` and `thread/rename` report the channel a thread is filed under;
`thread/compaction` names each summary's first and last message and the message after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.handlers.services import Services
from sidecar.protocol import (
    CompactionParams,
    CompactionResult,
    Empty,
    ThreadCreateParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadInfo,
    ThreadListResult,
    ThreadRenameParams,
    ThreadSearchParams,
    ThreadSearchResult,
)
from sidecar.store.context import ContextRepo
from tests.sidecar.handlers.conftest import call
from tests.sidecar.handlers.run_writer import RunWriter
from tests.sidecar.rpc.peer import build_services

pytestmark = pytest.mark.anyio


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Services]:
    services = build_services(tmp_path)
    yield services
    services.store.db.close()


async def test_the_thread_list_reports_each_threads_channel(svc: Services) -> None:
    novel = svc.store.create_thread("Novel draft")
    notes = svc.store.create_thread("Notes")
    loose = svc.store.create_thread("Loose")
    contexts = ContextRepo(svc.store.conn)
    contexts.set_channel(novel.id, "Writing")
    contexts.set_channel(notes.id, "Research")

    listed = await call(svc, "thread/list", Empty(), ThreadListResult)

    assert {t.id: t.channel for t in listed.threads} == {
        novel.id: "Writing",
        notes.id: "Research",
        loose.id: None,
    }


async def test_a_thread_taken_out_of_its_channel_is_listed_without_one(svc: Services) -> None:
    thread = svc.store.create_thread("Chapter")
    contexts = ContextRepo(svc.store.conn)
    contexts.set_channel(thread.id, "Writing")
    contexts.set_channel(thread.id, None)

    listed = await call(svc, "thread/list", Empty(), ThreadListResult)

    assert [t.channel for t in listed.threads] == [None]


async def test_listing_reads_the_channels_in_one_query_however_many_threads(
    svc: Services,
) -> None:
    contexts = ContextRepo(svc.store.conn)
    for n in range(300):
        thread = svc.store.create_thread(f"Thread {n}")
        contexts.set_channel(thread.id, f"Channel {n % 30:02d}")
    statements: list[str] = []
    svc.store.conn.set_trace_callback(statements.append)
    try:
        listed = await call(svc, "thread/list", Empty(), ThreadListResult)
    finally:
        svc.store.conn.set_trace_callback(None)

    assert len(listed.threads) == 300
    assert {t.channel for t in listed.threads} == {f"Channel {n:02d}" for n in range(30)}
    assert len([s for s in statements if "thread_context" in s]) == 1


async def test_get_and_rename_keep_the_channel_so_the_list_does_not_drop_it(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Chapter")
    ContextRepo(svc.store.conn).set_channel(thread.id, "Writing")

    got = await call(svc, "thread/get", ThreadGetParams(thread_id=thread.id), ThreadGetResult)
    renamed = await call(
        svc, "thread/rename", ThreadRenameParams(thread_id=thread.id, title="Prologue"), ThreadInfo
    )
    created = await call(svc, "thread/create", ThreadCreateParams(title="Fresh"), ThreadInfo)

    assert got.thread.channel == "Writing"
    assert (renamed.title, renamed.channel) == ("Prologue", "Writing")
    assert created.channel is None


def test_a_thread_summary_without_a_channel_still_parses() -> None:
    """Frames from an older sidecar carry no `channel`: the desktop reads them as unfiled."""
    old = {"id": "t1", "title": "T", "status": "idle", "created_at": 1.0, "updated_at": 2.0}
    assert ThreadInfo.model_validate(old).channel is None
    assert "channel" not in ThreadInfo.model_validate(old).model_dump(exclude_none=True)


@pytest.fixture
def memory_svc(tmp_path: Path) -> Iterator[Services]:
    services = build_services(tmp_path)
    yield services
    services.store.db.close()


async def test_each_summary_names_its_range_and_the_first_row_after_it(
    memory_svc: Services,
) -> None:
    thread = memory_svc.store.create_thread("Chapter").id
    first = RunWriter(memory_svc.store, thread, question="One.")
    first.answer("Answer one.")
    second = RunWriter(memory_svc.store, thread, question="Two.")
    second.tool_call("call-2")
    second.answer("Answer two.")
    third = RunWriter(memory_svc.store, thread, question="Three.")
    contexts = ContextRepo(memory_svc.store.conn)
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
        memory_svc, "thread/compaction", CompactionParams(thread_id=thread), CompactionResult
    )

    assert [(s.from_id, s.to_id, s.next_id) for s in result.summaries] == [
        (f"{first.turn}:user", f"{first.turn}:answer", f"{second.turn}:user"),
        (f"{second.turn}:user", "call-2", f"{second.turn}:answer"),  # past the tool result
        (f"{first.turn}:user", f"{third.turn}:user", None),  # nothing after it yet
    ]


async def test_search_counts_the_matches_in_each_message_not_only_the_messages(
    svc: Services,
) -> None:
    thread = svc.store.create_thread("Rivers")
    svc.store.add_message(thread.id, "user", "Tell me about the river.", message_id="q")
    many = " ".join(["The river bends.", "**River** banks,", "rivers run."] * 40)
    svc.store.add_message(thread.id, "assistant", many, message_id="a")
    svc.store.add_message(
        thread.id, "assistant", "A river and a lake; the lake river", message_id="b"
    )

    found = await call(
        svc,
        "thread/search",
        ThreadSearchParams(thread_id=thread.id, query="river"),
        ThreadSearchResult,
    )
    phrase = await call(
        svc,
        "thread/search",
        ThreadSearchParams(thread_id=thread.id, query="lake river"),
        ThreadSearchResult,
    )

    assert [(h.message_id, h.matches) for h in found.hits] == [("b", 2), ("a", 120), ("q", 1)]
    # Both words are in "b" twice, but as the words of the query in order only once.
    assert [(h.message_id, h.matches) for h in phrase.hits] == [("b", 1)]
