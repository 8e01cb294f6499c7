"""The real sidecar subprocess with no model configured: threads, direct commands, approvals,
restarts and kills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidecar.protocol import ErrorCode
from tests.e2e.harness import RpcFailure, Sidecar, event_types

pytestmark = pytest.mark.anyio


def write_command(path: str, content: str) -> str:
    return f"/call workspace__write {json.dumps({'path': path, 'content': content})}"


async def start_and_finish(sidecar: Sidecar, thread_id: str, text: str) -> list[object]:
    run = await sidecar.call("run/start", {"thread_id": thread_id, "text": text})
    return list(await sidecar.run_to_end(run["run_id"]))


async def test_initialize_reports_protocol_and_model_state(sidecar_data: Path, workspace: Path):
    process = await Sidecar.start(sidecar_data, workspace)
    try:
        result = await process.call("initialize", {"client_name": "t", "protocol_version": "1.0"})
        assert result["protocol_version"] == "1.0"
        assert result["model_configured"] is False
        with pytest.raises(RpcFailure) as failure:
            await process.call("initialize", {"client_name": "t", "protocol_version": "2.0"})
        assert failure.value.code == ErrorCode.INVALID_PARAMS
    finally:
        assert await process.shutdown() == 0


async def test_threads_can_be_created_listed_renamed_and_deleted(sidecar: Sidecar):
    first = await sidecar.call("thread/create", {"title": "Chapter one"})
    second = await sidecar.call("thread/create", {})
    listed = await sidecar.call("thread/list")
    assert {t["id"] for t in listed["threads"]} == {first["id"], second["id"]}
    renamed = await sidecar.call("thread/rename", {"thread_id": first["id"], "title": "Prologue"})
    assert renamed["title"] == "Prologue"
    await sidecar.call("thread/delete", {"thread_id": second["id"]})
    with pytest.raises(RpcFailure) as failure:
        await sidecar.call("thread/get", {"thread_id": second["id"]})
    assert failure.value.code == ErrorCode.THREAD_NOT_FOUND


async def test_without_a_model_the_answer_explains_how_to_configure_one(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    events = await start_and_finish(sidecar, thread["id"], "hello")
    tokens = [e.event.text for e in events if e.event.type == "token"]  # type: ignore[union-attr]
    assert "ATRIUM_MODEL" in "".join(tokens)
    assert event_types(events)[-1] == "run_finished"


async def test_tools_command_lists_workspace_tools(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    await start_and_finish(sidecar, thread["id"], "/tools")
    tools = await sidecar.call("tool/list")
    names = {t["name"] for t in tools["tools"]}
    assert {"workspace__read", "workspace__write", "workspace__edit"} <= names
    got = await sidecar.call("thread/get", {"thread_id": thread["id"]})
    assert "workspace__read" in got["messages"][-1]["content"]


async def test_read_only_call_runs_without_asking(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    events = await start_and_finish(
        sidecar, thread["id"], '/call workspace__read {"path": "notes.md"}'
    )
    assert "interrupt" not in event_types(events)
    results = [e.event for e in events if e.event.type == "tool_result"]
    assert len(results) == 1 and not results[0].is_error  # type: ignore[union-attr]
    assert "the river is wide" in results[0].content  # type: ignore[union-attr]


async def test_write_waits_for_approval_with_a_diff_then_runs_once_allowed(
    sidecar: Sidecar, workspace: Path
):
    thread = await sidecar.call("thread/create", {})
    events = await start_and_finish(sidecar, thread["id"], write_command("draft.md", "hello\n"))
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    assert interrupt.kind == "approval"
    assert (interrupt.server, interrupt.tool) == ("workspace", "write")
    assert interrupt.diff is not None and "+hello" in interrupt.diff
    assert not (workspace / "draft.md").exists()
    assert events[-1].event.type == "run_finished"
    assert events[-1].event.outcome == "interrupted"  # type: ignore[union-attr]

    run = await sidecar.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": interrupt.id,
            "value": {"decision": "allow_once"},
        },
    )
    resumed = await sidecar.run_to_end(run["run_id"])
    assert event_types(resumed)[-1] == "run_finished"
    assert (workspace / "draft.md").read_text() == "hello\n"
    got = await sidecar.call("thread/get", {"thread_id": thread["id"]})
    assert got["interrupts"] == [] and got["status"] == "idle"
    tool_messages = [m for m in got["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and not tool_messages[0]["is_error"]


async def test_a_denied_write_reports_the_reason_and_changes_nothing(
    sidecar: Sidecar, workspace: Path
):
    thread = await sidecar.call("thread/create", {})
    events = await start_and_finish(sidecar, thread["id"], write_command("x.md", "x"))
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    run = await sidecar.call(
        "run/resume",
        {
            "thread_id": thread["id"],
            "interrupt_id": interrupt.id,
            "value": {"decision": "deny", "reason": "not that file"},
        },
    )
    resumed = await sidecar.run_to_end(run["run_id"])
    result = next(e.event for e in resumed if e.event.type == "tool_result")
    assert result.is_error and "not that file" in result.content  # type: ignore[union-attr]
    assert not (workspace / "x.md").exists()


async def test_resume_rejects_unknown_interrupts_and_bad_values(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    events = await start_and_finish(sidecar, thread["id"], write_command("y.md", "y"))
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    with pytest.raises(RpcFailure) as unknown:
        await sidecar.call(
            "run/resume",
            {"thread_id": thread["id"], "interrupt_id": "nope", "value": {"decision": "deny"}},
        )
    assert unknown.value.code == ErrorCode.NO_SUCH_INTERRUPT
    with pytest.raises(RpcFailure) as bad:
        await sidecar.call(
            "run/resume",
            {"thread_id": thread["id"], "interrupt_id": interrupt.id, "value": {"decision": "ok"}},
        )
    assert bad.value.code == ErrorCode.INVALID_RESUME_VALUE
    got = await sidecar.call("thread/get", {"thread_id": thread["id"]})
    assert [i["id"] for i in got["interrupts"]] == [interrupt.id]


async def _allow_a_write_then_restart(
    sidecar_data: Path, workspace: Path, decision: str
) -> tuple[Sidecar, str]:
    """Answer a thread's first write with `decision`, stop the sidecar cleanly, start a new
    one: the restarted sidecar and the thread."""
    process = await Sidecar.start(sidecar_data, workspace)
    thread = await process.call("thread/create", {})
    events = await start_and_finish(process, thread["id"], write_command("a.md", "1"))
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    run = await process.call(
        "run/resume",
        {"thread_id": thread["id"], "interrupt_id": interrupt.id, "value": {"decision": decision}},
    )
    await process.run_to_end(run["run_id"])
    assert await process.shutdown() == 0
    return await Sidecar.start(sidecar_data, workspace), thread["id"]


async def test_allow_for_thread_sticks_across_a_restart(sidecar_data: Path, workspace: Path):
    process, thread_id = await _allow_a_write_then_restart(sidecar_data, workspace, "allow_thread")
    try:
        events = await start_and_finish(process, thread_id, write_command("a.md", "2"))
        assert "interrupt" not in event_types(events)
        assert (workspace / "a.md").read_text() == "2"
        other = await process.call("thread/create", {})
        events = await start_and_finish(process, other["id"], write_command("a.md", "3"))
        assert "interrupt" in event_types(events)
    finally:
        await process.kill()


async def test_always_allow_sticks_in_every_thread_across_a_restart_until_revoked(
    sidecar_data: Path, workspace: Path
):
    process, _thread_id = await _allow_a_write_then_restart(sidecar_data, workspace, "allow_always")
    try:
        other = await process.call("thread/create", {})
        events = await start_and_finish(process, other["id"], write_command("a.md", "2"))
        assert "interrupt" not in event_types(events)
        assert (workspace / "a.md").read_text() == "2"
        grants = (await process.call("grant/list"))["grants"]
        assert [(g["thread_id"], g["server"], g["tool"]) for g in grants] == [
            (None, "workspace", "write")
        ]
        await process.call(
            "grant/revoke", {"thread_id": None, "server": "workspace", "tool": "write"}
        )
        events = await start_and_finish(process, other["id"], write_command("a.md", "3"))
        assert "interrupt" in event_types(events)
    finally:
        await process.kill()


async def test_a_pending_approval_survives_a_killed_sidecar(sidecar_data: Path, workspace: Path):
    process = await Sidecar.start(sidecar_data, workspace)
    thread = await process.call("thread/create", {})
    events = await start_and_finish(process, thread["id"], write_command("k.md", "kept"))
    interrupt = next(e.event.interrupt for e in events if e.event.type == "interrupt")  # type: ignore[union-attr]
    await process.kill()

    process = await Sidecar.start(sidecar_data, workspace)
    try:
        got = await process.call("thread/get", {"thread_id": thread["id"]})
        assert [i["id"] for i in got["interrupts"]] == [interrupt.id]
        assert got["status"] == "interrupted"
        run = await process.call(
            "run/resume",
            {
                "thread_id": thread["id"],
                "interrupt_id": interrupt.id,
                "value": {"decision": "allow_once"},
            },
        )
        assert event_types(await process.run_to_end(run["run_id"]))[-1] == "run_finished"
        assert (workspace / "k.md").read_text() == "kept"
    finally:
        await process.kill()


async def test_a_new_message_in_interrupt_mode_closes_an_unanswered_approval_with_a_result(
    sidecar: Sidecar,
):
    """A message sent while a question waits is queued (issue 15); sent as `interrupt`, it takes
    over: the unanswered call is closed with a result and the question is gone."""
    thread = await sidecar.call("thread/create", {})
    await start_and_finish(sidecar, thread["id"], write_command("z.md", "z"))
    run = await sidecar.call(
        "run/start", {"thread_id": thread["id"], "text": "/tools", "mode": "interrupt"}
    )
    await sidecar.run_to_end(run["run_id"])
    got = await sidecar.call("thread/get", {"thread_id": thread["id"]})
    calls = [c["id"] for m in got["messages"] for c in m["tool_calls"]]
    results = {m["tool_call_id"]: m for m in got["messages"] if m["role"] == "tool"}
    assert calls and all(c in results for c in calls)
    assert results[calls[0]]["is_error"] is True
    assert got["interrupts"] == []


async def test_malformed_frames_get_error_replies_and_the_sidecar_lives_on(sidecar: Sidecar):
    sidecar.send_raw(b"{not json\n")
    sidecar.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": "no/such"}\n')
    sidecar.send_raw(b'{"jsonrpc": "2.0", "id": 8, "method": "thread/get", "params": {}}\n')
    assert await sidecar.call("ping") == {}
    errors = {m.get("id"): m["error"]["code"] for m in sidecar.raw if "error" in m}
    assert errors == {
        None: ErrorCode.PARSE_ERROR,
        7: ErrorCode.METHOD_NOT_FOUND,
        8: ErrorCode.INVALID_PARAMS,
    }


async def test_runs_on_missing_threads_or_with_nothing_to_resume_are_refused(sidecar: Sidecar):
    thread = await sidecar.call("thread/create", {})
    with pytest.raises(RpcFailure) as failure:
        await sidecar.call("run/start", {"thread_id": "missing", "text": "hi"})
    assert failure.value.code == ErrorCode.THREAD_NOT_FOUND
    with pytest.raises(RpcFailure) as nothing:
        await sidecar.call("run/retry", {"thread_id": thread["id"]})
    assert nothing.value.code == ErrorCode.NOTHING_TO_RESUME
