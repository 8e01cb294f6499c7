"""Undo end to end: the real sidecar with a scripted model writes real files through the
workspace tools over three turns; `thread/checkpoints`, `thread/rewind` (undo, redo, conflicts,
force) and `thread/fork` bring messages and files back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.store.blobs import BlobStore, blob_root
from tests.e2e.harness import RpcFailure, Sidecar, event_types
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602
THREAD_BUSY = -32002


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
async def agent(
    sidecar_data: Path, workspace: Path, model: ScriptedModelServer
) -> AsyncIterator[Sidecar]:
    env = {
        "ATRIUM_MODEL": "openai/gpt-4o-mini",
        "ATRIUM_MODEL_API_BASE": model.url + "/v1",
        "ATRIUM_MODEL_API_KEY": "sk-scripted",
    }
    process = await Sidecar.start(sidecar_data, workspace, **env)
    yield process
    await process.kill()


async def turn(agent: Sidecar, thread_id: str, text: str) -> None:
    """One turn, every write approved for the thread."""
    run = await agent.call("run/start", {"thread_id": thread_id, "text": text})
    events = await agent.run_to_end(run["run_id"])
    while event_types(events)[-1] != "run_finished" or events[-1].event.outcome == "interrupted":  # type: ignore[union-attr]
        asked = [e.event.interrupt for e in events if e.event.type == "interrupt"]  # type: ignore[union-attr]
        assert asked, event_types(events)
        resumed = await agent.call(
            "run/resume",
            {
                "thread_id": thread_id,
                "interrupt_id": asked[-1].id,
                "value": {"decision": "allow_thread"},
            },
        )
        events = await agent.run_to_end(resumed["run_id"])
    assert event_types(events)[-1] == "run_finished"


async def three_turns(agent: Sidecar, model: ScriptedModelServer) -> str:
    model.push(
        Reply.tool_call("workspace__write", {"path": "a.md", "content": "a one\n"}),
        Reply.text("Wrote a."),
        Reply.tool_call("workspace__write", {"path": "a.md", "content": "a two\n"}),
        Reply.text("Rewrote a."),
        Reply.tool_call("workspace__write", {"path": "c.md", "content": "c one\n"}),
        Reply.text("Wrote c."),
    )
    thread = await agent.call("thread/create", {})
    for text in ("first: write a", "second: rewrite a", "third: write c"):
        await turn(agent, thread["id"], text)
    return str(thread["id"])


async def checkpoints(agent: Sidecar, thread_id: str) -> list[dict[str, Any]]:
    return (await agent.call("thread/checkpoints", {"thread_id": thread_id}))["checkpoints"]


async def author_texts(agent: Sidecar, thread_id: str) -> list[str]:
    got = await agent.call("thread/get", {"thread_id": thread_id})
    return [m["content"] for m in got["messages"] if m["role"] == "user"]


async def test_rewind_to_turn_one_then_redo_brings_files_and_messages_back(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    thread_id = await three_turns(agent, model)
    marks = await checkpoints(agent, thread_id)
    assert [(m["text"], m["files"], m["undone"]) for m in marks] == [
        ("first: write a", ["a.md"], False),
        ("second: rewrite a", ["a.md"], False),
        ("third: write c", ["c.md"], False),
    ]

    undone = await agent.call(
        "thread/rewind", {"thread_id": thread_id, "checkpoint_id": marks[0]["checkpoint_id"]}
    )
    assert undone["direction"] == "undo" and undone["applied"] is True
    assert sorted((f["path"], f["status"]) for f in undone["files"]) == [
        ("a.md", "restored"),
        ("c.md", "restored"),
    ]
    assert undone["conflicts"] == [] and undone["effects"] == []
    assert (workspace / "a.md").read_text() == "a one\n"
    assert not (workspace / "c.md").exists()
    assert await author_texts(agent, thread_id) == ["first: write a"]
    assert [m["undone"] for m in await checkpoints(agent, thread_id)] == [False, True, True]

    redone = await agent.call(
        "thread/rewind", {"thread_id": thread_id, "checkpoint_id": marks[2]["checkpoint_id"]}
    )
    assert redone["direction"] == "redo" and redone["turns"] == [
        marks[1]["checkpoint_id"],
        marks[2]["checkpoint_id"],
    ]
    assert (workspace / "a.md").read_text() == "a two\n"
    assert (workspace / "c.md").read_text() == "c one\n"
    assert await author_texts(agent, thread_id) == [
        "first: write a",
        "second: rewrite a",
        "third: write c",
    ]
    assert [m["undone"] for m in await checkpoints(agent, thread_id)] == [False, False, False]


async def test_fork_at_turn_one_copies_only_turn_one_and_leaves_the_original(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path
):
    thread_id = await three_turns(agent, model)
    marks = await checkpoints(agent, thread_id)
    forked = await agent.call(
        "thread/fork", {"thread_id": thread_id, "checkpoint_id": marks[0]["checkpoint_id"]}
    )
    assert forked["thread_id"] != thread_id
    assert await author_texts(agent, forked["thread_id"]) == ["first: write a"]
    got = await agent.call("thread/get", {"thread_id": forked["thread_id"]})
    assert got["messages"][-1]["content"].strip().endswith("Wrote a.")
    assert len(await author_texts(agent, thread_id)) == 3
    assert (workspace / "a.md").read_text() == "a two\n"
    assert (workspace / "c.md").read_text() == "c one\n"


async def test_a_hand_edit_is_a_conflict_left_alone_until_forced_and_then_kept(
    agent: Sidecar, model: ScriptedModelServer, workspace: Path, sidecar_data: Path
):
    thread_id = await three_turns(agent, model)
    marks = await checkpoints(agent, thread_id)
    (workspace / "a.md").write_text("the author's own words\n")
    first = marks[0]["checkpoint_id"]

    preview = await agent.call(
        "thread/rewind", {"thread_id": thread_id, "checkpoint_id": first, "dry_run": True}
    )
    assert preview["applied"] is False and preview["conflicts"] == ["a.md"]
    assert len(await author_texts(agent, thread_id)) == 3

    left = await agent.call("thread/rewind", {"thread_id": thread_id, "checkpoint_id": first})
    assert left["conflicts"] == ["a.md"]
    assert {f["path"]: f["status"] for f in left["files"]} == {
        "a.md": "conflict",
        "c.md": "restored",
    }
    assert (workspace / "a.md").read_text() == "the author's own words\n"
    assert not (workspace / "c.md").exists()

    # Redo, then rewind again with force: the author's version is replaced and kept.
    await agent.call(
        "thread/rewind", {"thread_id": thread_id, "checkpoint_id": marks[2]["checkpoint_id"]}
    )
    assert (workspace / "a.md").read_text() == "the author's own words\n"
    forced = await agent.call(
        "thread/rewind", {"thread_id": thread_id, "checkpoint_id": first, "force": True}
    )
    (a_file,) = [f for f in forced["files"] if f["path"] == "a.md"]
    assert a_file["status"] == "forced" and forced["conflicts"] == ["a.md"]
    assert (workspace / "a.md").read_text() == "a one\n"
    kept = BlobStore(blob_root(sidecar_data / "atrium.db")).read(a_file["kept_blob"])
    assert kept == b"the author's own words\n"


async def test_an_unknown_checkpoint_and_a_busy_thread_are_refused(
    agent: Sidecar, model: ScriptedModelServer
):
    thread = await agent.call("thread/create", {})
    with pytest.raises(RpcFailure) as refused:
        await agent.call("thread/rewind", {"thread_id": thread["id"], "checkpoint_id": "nope"})
    assert refused.value.code == INVALID_PARAMS

    release = threading.Event()
    model.push(Reply.hang(release))
    run = await agent.call("run/start", {"thread_id": thread["id"], "text": "think hard"})
    await asyncio.to_thread(model.wait_for_generations, 1)
    (mark,) = await checkpoints(agent, thread["id"])
    with pytest.raises(RpcFailure) as busy:
        await agent.call(
            "thread/rewind", {"thread_id": thread["id"], "checkpoint_id": mark["checkpoint_id"]}
        )
    assert busy.value.code == THREAD_BUSY
    await agent.call("run/cancel", {"thread_id": thread["id"]})
    release.set()
    await agent.run_to_end(run["run_id"])
