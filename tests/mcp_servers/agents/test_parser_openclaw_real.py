"""Output recorded from the real OpenClaw 2026.9.6 parses into truthful results.

Every error envelope is a failure with OpenClaw's own message and a normalized code, the turn past
`--timeout` is a timeout, the tool turn counts its tool calls, and its transcript rows become the
same tool_call / tool_result / artifact / message events the other controllers emit.
"""

from __future__ import annotations

import json

import pytest

from mcp_servers.agents.events import (
    ArtifactCreated,
    Completed,
    Failed,
    MessageCompleted,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.parsers import OpenClawOutputParser, RunFacts, build_result
from mcp_servers.agents.parsers.openclaw import classify_error
from mcp_servers.agents.parsers.openclaw_transcript import TranscriptRow, transcript_events
from mcp_servers.agents.parsers.outcome import terminal_event
from mcp_servers.agents.results import ErrorCode, OperatorResult
from tests.mcp_servers.agents.helpers import LOCAL_TRANSCRIPTS, read_lines


def replay(name: str, exit_code: int, rows: list[TranscriptRow] | None = None) -> OperatorResult:
    parser = OpenClawOutputParser(session_hint="hint", workspace="/home/author/openclaw-run/ws")
    for line in read_lines(LOCAL_TRANSCRIPTS / name):
        parser.feed(line)
    if rows is not None:
        parser.add_transcript(rows)
    parser.finish()
    return build_result(parser.acc, RunFacts(run_id="r", provider="openclaw", exit_code=exit_code))


def tool_rows() -> list[TranscriptRow]:
    lines = read_lines(LOCAL_TRANSCRIPTS / "openclaw_real_tool_turn.rows.jsonl")
    return [TranscriptRow(r["seq"], r["event"]) for r in map(json.loads, lines)]


@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        (
            "openclaw_real_bad_key.txt",
            ErrorCode.AUTH_FAILED,
            "⚠️ scripted/scripted request failed (authentication failed, HTTP 401). "
            "Re-authenticate the provider and try again.",
        ),
        (
            "openclaw_real_unreachable.txt",
            ErrorCode.MODEL_UNREACHABLE,
            "LLM request failed: network connection error.",
        ),
        (
            "openclaw_real_rate_limit.txt",
            ErrorCode.RATE_LIMITED,
            "⚠️ API rate limit reached. Please try again later.",
        ),
        (
            "openclaw_real_no_gateway.txt",
            ErrorCode.CONFIGURATION,
            "gateway agent requires credentials before opening a websocket",
        ),
    ],
    ids=["bad-key", "unreachable", "rate-limit", "no-gateway"],
)
def test_every_error_envelope_is_a_failure_with_openclaws_message(
    name: str, code: ErrorCode, message: str
) -> None:
    result = replay(name, exit_code=1)

    assert result.status == "failed"
    assert result.error is not None
    assert (result.error.code, result.error.message) == (code, message)
    assert result.error.detail["type"] == "cli_error"
    assert isinstance(terminal_event(result), Failed)


def test_the_no_gateway_envelope_keeps_its_fix_lines_in_the_detail() -> None:
    result = replay("openclaw_real_no_gateway.txt", exit_code=1)

    assert result.error is not None
    assert "Fix: configure gateway.auth token/password" in str(result.error.detail["message"])


def test_a_turn_past_its_timeout_is_a_timeout_not_a_success() -> None:
    result = replay("openclaw_real_timeout.txt", exit_code=1)

    assert result.status == "timeout"
    assert result.error is not None and result.error.code is ErrorCode.TIMEOUT
    assert result.error.message.startswith("Request timed out before a response was generated")
    assert result.error.detail["kind"] == "incomplete_turn"
    assert result.final_message is None  # the isError payload is not an answer


def test_a_plain_turn_is_a_success_with_its_answer_and_usage() -> None:
    result = replay("openclaw_real_plain.txt", exit_code=0)

    assert result.status == "success"
    assert result.final_message == "hello from scripted"
    assert result.session is not None and result.session.session_id == "s1"
    assert (result.metrics.input_tokens, result.metrics.output_tokens) == (12273, 4)
    assert (result.metrics.turns, result.metrics.tool_calls) == (1, 0)


def test_the_tool_summary_gives_the_tool_call_count_without_a_transcript() -> None:
    result = replay("openclaw_real_tool_turn.txt", exit_code=0)

    assert result.status == "success" and result.final_message == "wrote hello.txt"
    assert result.metrics.tool_calls == 1


def test_the_tool_turns_transcript_rows_become_tool_and_message_events() -> None:
    parser = OpenClawOutputParser(session_hint="hint", workspace="/home/author/openclaw-run/ws")
    for line in read_lines(LOCAL_TRANSCRIPTS / "openclaw_real_tool_turn.txt"):
        parser.feed(line)
    parser.add_transcript(tool_rows())
    events = parser.finish()
    result = build_result(parser.acc, RunFacts(run_id="r", provider="openclaw", exit_code=0))

    assert events[0] == SessionStarted(session_id="rec-tool", model="scripted")
    kinds = [type(e) for e in events[1:-1]]
    assert kinds == [ToolCall, ToolResult, ArtifactCreated, MessageCompleted]
    call, tool_result, artifact, message = events[1:-1]
    assert call == ToolCall(
        call_id="call_w1", name="write", input={"path": "hello.txt", "content": "hi there\n"}
    )
    assert tool_result == ToolResult(
        call_id="call_w1", output="Successfully wrote 9 bytes to hello.txt"
    )
    assert artifact == ArtifactCreated(
        path="/home/author/openclaw-run/ws/hello.txt", change="added", call_id="call_w1"
    )
    assert isinstance(message, MessageCompleted) and message.text == "wrote hello.txt"
    assert result.metrics.tool_calls == 1
    assert [a.path for a in result.artifacts] == ["/home/author/openclaw-run/ws/hello.txt"]
    assert terminal_event(result) == Completed(
        session_id="rec-tool", final_message="wrote hello.txt"
    )


def test_user_turns_and_bookkeeping_rows_produce_no_events() -> None:
    rows = [r for r in tool_rows() if r.event.get("type") != "message"]
    user = [r for r in tool_rows() if r.event.get("message", {}).get("role") == "user"]

    assert transcript_events(rows + user) == []


def test_an_error_envelope_after_steps_still_reports_the_steps() -> None:
    parser = OpenClawOutputParser()
    for line in read_lines(LOCAL_TRANSCRIPTS / "openclaw_real_unreachable.txt"):
        parser.feed(line)
    parser.add_transcript(tool_rows())

    events = parser.finish()

    assert [type(e) for e in events][:2] == [ToolCall, ToolResult]
    assert parser.acc.outcome == "failed"


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("No API key found for provider atrium", ErrorCode.AUTH_FAILED),
        ("fetch failed: connect ECONNREFUSED 127.0.0.1:9", ErrorCode.MODEL_UNREACHABLE),
        ("Provider atrium is in cooldown", ErrorCode.RATE_LIMITED),
        ("Unknown model: atrium/nope", ErrorCode.CONFIGURATION),
        ("something else entirely", ErrorCode.AGENT_ERROR),
    ],
)
def test_error_messages_are_classified(message: str, code: ErrorCode) -> None:
    assert classify_error(message) is code
