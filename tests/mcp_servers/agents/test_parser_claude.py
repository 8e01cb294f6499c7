"""Claude Code stream-json transcripts parse into the expected events and results.

Expectations were written from reading each transcript in tests/fixtures/controllers.
"""

from __future__ import annotations

import json

import pytest

from mcp_servers.agents.events import (
    ArtifactCreated,
    Completed,
    Failed,
    MessageCompleted,
    MessageDelta,
    PermissionRequest,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
    UsageReported,
)
from mcp_servers.agents.parsers import ClaudeStreamParser, replay_lines
from mcp_servers.agents.results import Artifact, ErrorCode, PermissionDenial
from tests.mcp_servers.agents.helpers import LOCAL_TRANSCRIPTS, read_lines, shared_transcript


def test_permission_allowed_write_succeeds_with_the_created_file_as_artifact() -> None:
    streamed, result = replay_lines("claude", read_lines(shared_transcript("claude_1.jsonl")))
    events = [e for e in streamed if not isinstance(e, UsageReported)]

    session = "25f505f3-79a7-4119-8ffa-23ce6efc7560"
    call = "toolu_01PSqBeA6sKydYaELf8NTXHH"
    path = "C:\\work\\repo\\hello.txt"
    assert events[0] == SessionStarted(
        session_id=session,
        cwd="C:\\work\\repo",
        tools=("Task", "AskUserQuestion", "Bash", "Read", "Write"),
    )
    assert [type(e) for e in events] == [
        SessionStarted,
        MessageCompleted,
        ToolCall,
        PermissionRequest,
        ToolResult,
        ArtifactCreated,
        MessageCompleted,
        MessageCompleted,
        StateHint,
        Completed,
    ]
    thinking = events[1]
    assert isinstance(thinking, MessageCompleted)
    assert thinking.channel == "thinking"
    assert thinking.message_id == "msg_011Cdpz3ik2oxdXQJhMeVjdw"
    assert events[2] == ToolCall(
        call_id=call, name="Write", input={"file_path": path, "content": "hi"}
    )
    assert events[3] == PermissionRequest(
        request_id="0a796fa8-74c6-4c82-82a7-fb161e77a51b",
        tool_name="Write",
        input={"file_path": path, "content": "hi"},
        call_id=call,
        description="hello.txt",
        kind="tool",
    )
    tool_result = events[4]
    assert isinstance(tool_result, ToolResult)
    assert (tool_result.call_id, tool_result.is_error, tool_result.denied) == (call, False, False)
    assert tool_result.output.startswith("File created successfully at: C:\\work\\repo\\hello.txt")
    assert events[5] == ArtifactCreated(path=path, change="added", call_id=call)
    final_text = "Done. Created `hello.txt` with content `hi`."
    assert events[7] == MessageCompleted(
        text=final_text, channel="text", message_id="msg_011Cdpz49FRaze2R7B4iwzcL"
    )
    assert events[-1] == Completed(session_id=session, final_message=final_text)

    assert result.status == "success"
    assert result.error is None
    assert result.session is not None and result.session.session_id == session
    assert result.final_message == final_text
    assert result.artifacts == (Artifact(path=path, change="added"),)
    assert result.permission_denials == ()
    metrics = result.metrics
    assert metrics.cost_usd == pytest.approx(0.009825)
    assert (metrics.input_tokens, metrics.output_tokens) == (18, 491)
    assert (metrics.cache_read_tokens, metrics.cache_write_tokens) == (66670, 548)
    assert (metrics.duration_ms, metrics.turns, metrics.tool_calls) == (7997, 2, 1)


def test_denied_permission_leaves_a_successful_run_with_the_denial_reported() -> None:
    events, result = replay_lines("claude", read_lines(shared_transcript("claude_2.jsonl")))

    call = "toolu_01NfZSDqXQKXwt59MWGhoqgw"
    path = "C:\\work\\repo\\hello.txt"
    permission = next(e for e in events if isinstance(e, PermissionRequest))
    assert permission.request_id == "68b4702e-6725-4f2d-abd1-243b51fea3be"
    tool_result = next(e for e in events if isinstance(e, ToolResult))
    assert tool_result == ToolResult(
        call_id=call,
        output="no user is available; permission denied",
        is_error=True,
        denied=True,
    )
    assert not any(isinstance(e, ArtifactCreated) for e in events)

    assert result.status == "success"
    assert result.session is not None
    assert result.session.session_id == "73094031-e29e-409e-bbcc-ec1a75506b3d"
    assert result.final_message is not None
    assert result.final_message.startswith("I cannot create the file.")
    assert result.artifacts == ()
    assert result.permission_denials == (
        PermissionDenial(
            tool_name="Write", call_id=call, input={"file_path": path, "content": "hi"}
        ),
    )
    assert result.metrics.cost_usd == pytest.approx(0.02206225)
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (18, 536)
    assert (result.metrics.cache_read_tokens, result.metrics.cache_write_tokens) == (60280, 6835)
    assert (result.metrics.duration_ms, result.metrics.turns) == (7324, 2)


def test_minimal_success_reports_model_cost_and_usage() -> None:
    events, result = replay_lines("claude", read_lines(shared_transcript("claude_4.jsonl")))

    session = "1d1e46f9-35c7-4834-b529-846d5bb82288"
    assert events[0] == SessionStarted(
        session_id=session,
        model="claude-opus-4-5-20251101",
        cwd="/home/author/claude-agent-sdk-gleam",
        tools=("Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write"),
    )
    assert events[1] == MessageCompleted(text="4", message_id="msg_01Y1Lo6gYUXN71XaAq7sjUPm")
    assert events[-1] == Completed(session_id=session, final_message="4")
    assert result.status == "success"
    assert result.final_message == "4"
    assert result.metrics.cost_usd == pytest.approx(0.1354875)
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (10, 25)
    assert (result.metrics.cache_read_tokens, result.metrics.cache_write_tokens) == (0, 21570)
    assert (result.metrics.duration_ms, result.metrics.turns) == (2360, 1)
    assert result.metrics.tool_calls == 0


def test_max_turns_without_result_text_fails_with_the_cli_error() -> None:
    streamed, result = replay_lines("claude", read_lines(shared_transcript("claude_5.jsonl")))
    events = [e for e in streamed if not isinstance(e, UsageReported)]

    assert events[0] == ToolCall(
        call_id="toolu_012kfmMRjYahv94q7PHKiQn8",
        name="Bash",
        input={"command": "sleep 1", "description": "Sleep for 1 second (run 1 of 3)"},
    )
    thinking = events[1]
    assert isinstance(thinking, StateHint)
    assert thinking.hint == "thinking_tokens"
    assert thinking.detail["estimated_tokens"] == 50
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.status == "failed"
    assert failed.error.code is ErrorCode.MAX_TURNS

    assert result.status == "failed"
    assert result.session is not None
    assert result.session.session_id == "b1cacbdf-32f5-479b-97ed-4a869575dda8"
    assert result.final_message is None
    assert result.error is not None
    assert result.error.message == "Reached maximum number of turns (1)"
    assert result.error.detail["terminal_reason"] == "max_turns"
    assert result.metrics.cost_usd == pytest.approx(0.165684)
    assert (result.metrics.turns, result.metrics.tool_calls) == (2, 1)
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (9386, 410)


def test_api_error_reported_as_subtype_success_is_a_failure() -> None:
    events, result = replay_lines("claude", read_lines(shared_transcript("claude_6.jsonl")))

    status = next(e for e in events if isinstance(e, StateHint) and e.hint == "status")
    assert status.detail == {"status": "requesting"}
    assert MessageDelta(text="Hello!") in events

    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code is ErrorCode.API_ERROR
    assert result.error.detail["api_error_status"] == 404
    assert result.error.message.startswith("There's an issue with the selected model")
    # The session is the one named by the run's own result line, not by later lines.
    assert result.session is not None
    assert result.session.session_id == "0a4d8d99-ef93-4499-9084-39b2c92d24e0"
    assert result.metrics.cost_usd == 0


def test_ask_user_question_becomes_a_question_permission_request() -> None:
    events, _ = replay_lines("claude", read_lines(LOCAL_TRANSCRIPTS / "claude_ask_user.jsonl"))

    request = next(e for e in events if isinstance(e, PermissionRequest))
    assert request.kind == "question"
    assert request.tool_name == "AskUserQuestion"
    assert [q.question for q in request.questions] == ["Which greeting should the file hold?"]
    assert request.questions[0].options == ("hi", "hello")
    assert request.questions[0].header == "Greeting"


def test_blank_and_non_json_lines_produce_no_events_but_are_counted() -> None:
    parser = ClaudeStreamParser()

    assert parser.feed("").events == []
    assert parser.feed("[SandboxDebug] something").events == []
    assert parser.feed("{not json").events == []
    assert parser.feed('["a", "list"]').events == []
    assert parser.acc.non_json_lines == 3


def test_unknown_control_request_is_refused_so_the_cli_does_not_wait() -> None:
    parser = ClaudeStreamParser()

    step = parser.feed(
        '{"type":"control_request","request_id":"r9","request":{"subtype":"hook_callback"}}'
    )

    assert step.events == []
    assert len(step.replies) == 1
    response = step.replies[0]["response"]
    assert isinstance(response, dict)
    assert (response["subtype"], response["request_id"]) == ("error", "r9")


def test_control_cancel_request_is_reported_as_a_cancelled_permission() -> None:
    parser = ClaudeStreamParser()

    step = parser.feed('{"type":"control_cancel_request","request_id":"r1"}')

    assert step.events == [StateHint(hint="permission_cancelled", detail={"request_id": "r1"})]


def test_partial_thinking_deltas_go_to_the_thinking_channel() -> None:
    parser = ClaudeStreamParser()

    step = parser.feed(
        '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
        '"delta":{"type":"thinking_delta","thinking":"hmm"}}}'
    )

    assert step.events == [MessageDelta(text="hmm", channel="thinking")]


def test_usage_streams_as_run_totals_once_per_change_of_a_model_message() -> None:
    """Each model message's lines repeat its usage: the run's totals are the sum over messages,
    reported when one changes (what a budget stops a run on before its result)."""
    events, _result = replay_lines("claude", read_lines(shared_transcript("claude_1.jsonl")))

    usage = [e for e in events if isinstance(e, UsageReported)]
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(10, 8), (18, 9)]
    lines = [
        {"type": "assistant", "message": {"id": m, "content": [], "usage": u}}
        for m, u in [
            ("a", {"input_tokens": 100, "output_tokens": 5}),
            ("a", {"input_tokens": 100, "output_tokens": 5}),
            ("a", {"input_tokens": 100, "output_tokens": 40}),
            ("b", {"input_tokens": 300, "output_tokens": 7}),
        ]
    ]
    parser = ClaudeStreamParser()
    seen = [e for line in lines for e in parser.feed(json.dumps(line)).events]
    assert [(u.input_tokens, u.output_tokens) for u in seen if isinstance(u, UsageReported)] == [
        (100, 5),
        (100, 40),
        (400, 47),
    ]
