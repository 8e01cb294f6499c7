"""`ActivityLog`: a subagent's nested run events as short lines."""

from __future__ import annotations

from desktop.models.activity import MAX_ENTRIES, ActivityLog, activity_of
from sidecar.protocol import (
    ErrorInfo,
    MessageEvent,
    NodeStarted,
    RunFailed,
    SubagentEvent,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)
from tests.desktop.support import message


def test_a_tool_call_shows_its_progress_then_its_outcome():
    log = ActivityLog()
    log.apply(ToolCall(call_id="c1", server="workspace", tool="write", arguments={"path": "a"}))
    assert log.apply(ToolProgress(call_id="c1", progress=1, total=4))
    assert log.entries[0].state == "1/4"
    assert log.apply(ToolResult(call_id="c1", is_error=True, content="disk full"))
    (entry,) = log.entries
    assert entry.text == 'workspace/write {"path": "a"}'
    assert (entry.state, entry.detail) == ("error", "disk full")


def test_a_strong_agents_progress_messages_are_lines_of_their_own():
    log = ActivityLog()
    log.apply(ToolCall(call_id="c1", server="agents", tool="run", arguments={}))
    log.apply(ToolProgress(call_id="c1", progress=1, message="tool_call: Read chapter.md"))
    log.apply(ToolProgress(call_id="c1", progress=2, message="message_delta: Reading"))
    assert [e.text for e in log.entries[1:]] == [
        "tool_call: Read chapter.md",
        "message_delta: Reading",
    ]
    assert [e.kind for e in log.entries] == ["tool", "progress", "progress"]


def test_streamed_tokens_join_and_the_final_message_replaces_them():
    log = ActivityLog()
    log.apply(Token(text="Once "))
    log.apply(Token(text="upon"))
    assert [e.text for e in log.entries] == ["Once upon"]
    log.apply(MessageEvent(message=message("assistant", "Once upon a time", "m1")))
    assert [e.text for e in log.entries] == ["assistant: Once upon a time"]


def test_failures_show_and_events_with_nothing_to_show_are_skipped():
    log = ActivityLog()
    assert not log.apply(NodeStarted(node="planner"))
    assert not log.apply(ToolResult(call_id="unknown", is_error=False, content=""))
    assert not log.apply(MessageEvent(message=message("tool", "result", "m1")))
    log.apply(RunFailed(error=ErrorInfo(code="x", message="model down")))
    assert [(e.text, e.state) for e in log.entries] == [("failed: model down", "error")]


def test_only_the_newest_lines_are_kept():
    log = ActivityLog()
    for i in range(MAX_ENTRIES + 5):
        log.apply(ToolCall(call_id=f"c{i}", server="s", tool="t", arguments={}))
    assert len(log) == MAX_ENTRIES and log.dropped == 5
    assert log.entries[0].call_id == "c5"


def test_a_tasks_stored_events_read_as_the_lines_they_streamed_as():
    events = [
        SubagentEvent(task_id="a", plan_id="p1", event=call.model_dump())
        for call in (
            ToolCall(call_id="c1", server="workspace", tool="write", arguments={"path": "a"}),
            ToolResult(call_id="c1", is_error=False, content="wrote"),
        )
    ]
    events.append(SubagentEvent(task_id="a", plan_id="p1", event={"type": "from_the_future"}))
    log = activity_of(events)
    assert [(e.text, e.state) for e in log.entries] == [('workspace/write {"path": "a"}', "ok")]
