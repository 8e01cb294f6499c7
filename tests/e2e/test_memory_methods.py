"""The memory methods of the real sidecar, without a model: the author's memories, bad input,
identity files, compaction settings, usage and export; and a long thread with no model keeps
the most recent messages that fit and says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sidecar.protocol import ErrorCode, MemoryErrorCode
from tests.e2e.harness import RpcFailure, Sidecar, event_types

pytestmark = pytest.mark.anyio


async def _fails(agent: Sidecar, method: str, params: dict[str, object]) -> int:
    with pytest.raises(RpcFailure) as failed:
        await agent.call(method, params)
    return failed.value.code


async def test_the_author_saves_edits_moves_and_forgets_memories_and_bad_input_is_refused(
    sidecar: Sidecar,
) -> None:
    thread = (await sidecar.call("thread/create", {}))["id"]
    saved = await sidecar.call(
        "memory/write", {"thread_id": thread, "tier": "workspace", "text": "The river is the Wend."}
    )
    assert saved["by"] == "author" and saved["source_message"] is None
    listed = await sidecar.call("memory/list", {"thread_id": thread, "query": 'wend" NEAR(*'})
    assert [m["key"] for m in listed["memories"]] == [saved["key"]]
    moved = await sidecar.call(
        "memory/update",
        {"thread_id": thread, "key": saved["key"], "tier": "account", "pinned": True},
    )
    assert moved["tier"] == "account" and moved["pinned"] is True
    await sidecar.call("memory/forget", {"thread_id": thread, "key": saved["key"]})
    assert (await sidecar.call("memory/list", {"thread_id": thread}))["memories"] == []
    bad_tier = {"thread_id": thread, "tier": "galaxy", "text": "x"}
    assert await _fails(sidecar, "memory/write", bad_tier) == ErrorCode.INVALID_PARAMS
    empty = {"thread_id": thread, "tier": "thread", "text": "   "}
    assert await _fails(sidecar, "memory/write", empty) == MemoryErrorCode.MEMORY_REFUSED
    huge = {"thread_id": thread, "tier": "thread", "text": "x" * 1_000_000}
    assert await _fails(sidecar, "memory/write", huge) == ErrorCode.INVALID_PARAMS
    gone = {"thread_id": thread, "key": saved["key"]}
    assert await _fails(sidecar, "memory/forget", gone) == MemoryErrorCode.NO_SUCH_MEMORY
    channel = {"thread_id": thread, "tier": "channel", "text": "x"}
    assert await _fails(sidecar, "memory/write", channel) == MemoryErrorCode.MEMORY_REFUSED
    await sidecar.call(
        "thread/compaction", {"thread_id": thread, "channel": "Novel", "set_channel": True}
    )
    await sidecar.call("memory/write", channel)
    assert await _fails(sidecar, "memory/list", {"thread_id": "nope"}) == ErrorCode.THREAD_NOT_FOUND


async def test_identity_files_are_read_and_written_and_a_link_outside_is_refused(
    sidecar: Sidecar, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".atrium").mkdir()
    (workspace / ".atrium" / "SOUL.md").write_bytes(b"\xff\xfe not utf-8")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("private")
    os.symlink(outside, workspace / ".atrium" / "USER.md")
    got = await sidecar.call("identity/get", {})
    files = {f["path"]: f for f in got["files"]}
    assert files[".atrium/SOUL.md"]["error"] == "not UTF-8 text"
    assert "outside the workspace" in files[".atrium/USER.md"]["error"]
    assert files[".atrium/AGENT.md"]["exists"] is False
    await sidecar.call("identity/set", {"path": ".atrium/AGENT.md", "text": "Be brief.\n"})
    assert (workspace / ".atrium" / "AGENT.md").read_text() == "Be brief.\n"
    refused = {"path": ".atrium/USER.md", "text": "overwrite?"}
    assert await _fails(sidecar, "identity/set", refused) == MemoryErrorCode.IDENTITY_REFUSED
    assert outside.read_text() == "private"
    assert await _fails(sidecar, "identity/set", {"path": "../x.md", "text": "x"}) == (
        ErrorCode.INVALID_PARAMS
    )


async def test_without_a_model_a_long_thread_keeps_the_newest_messages_that_fit_and_says_so(
    sidecar_data: Path, workspace: Path
) -> None:
    (workspace / ".atrium").mkdir()
    (workspace / ".atrium" / "AGENT.md").write_text("Rules.\n")
    agent = await Sidecar.start(sidecar_data, workspace, ATRIUM_CONTEXT_TOKENS="1500")
    try:
        await agent.call("initialize", {"client_name": "tests"})
        thread = (await agent.call("thread/create", {}))["id"]
        context = None
        for n in range(8):
            run = await agent.call("run/start", {"thread_id": thread, "text": f"Message {n}"})
            events = await agent.run_to_end(run["run_id"])
            assert event_types(events)[-1] == "run_finished"
            context = next(e.event for e in events if e.event.type == "context")
        assert context is not None
        assert context.compaction is not None and not context.compaction.performed  # type: ignore[union-attr]
        assert "no model is configured" in context.compaction.reason  # type: ignore[union-attr]
        assert context.left_out_messages > 0  # type: ignore[union-attr]
        assert any(i.kind == "identity" and i.included for i in context.items)  # type: ignore[union-attr]
        exported = await agent.call("thread/export", {"thread_id": thread, "format": "json"})
        body = json.loads(exported["content"])
        assert len(body["messages"]) == 16 and body["usage"]["turns"] == []
        markdown = await agent.call("thread/export", {"thread_id": thread})
        assert (
            "**Author** (#1):" in markdown["content"]
            and "## Tokens and cost" in markdown["content"]
        )
        usage = await agent.call("thread/usage", {"thread_id": thread})
        assert usage["prompt_tokens"] == 0 and usage["cost"] is None
    finally:
        await agent.kill()


async def test_direct_memory_calls_are_staged_and_scoped_like_the_agents(sidecar: Sidecar) -> None:
    thread = (await sidecar.call("thread/create", {}))["id"]
    command = '/call memory__write {"text": "The lighthouse is red.", "tier": "account"}'
    run = await sidecar.call("run/start", {"thread_id": thread, "text": command})
    events = await sidecar.run_to_end(run["run_id"])
    chips = [e.event for e in events if e.event.type == "memory"]
    assert [(c.action, c.memory.text) for c in chips] == [("saved", "The lighthouse is red.")]  # type: ignore[union-attr]
    assert chips[0].memory.source_message.endswith(":user")  # type: ignore[union-attr]
    run = await sidecar.call(
        "run/start", {"thread_id": thread, "text": '/call memory__search {"query": "lighthouse"}'}
    )
    events = await sidecar.run_to_end(run["run_id"])
    results = [e.event for e in events if e.event.type == "tool_result"]
    assert "The lighthouse is red." in results[-1].content  # type: ignore[union-attr]
