"""Gateway `agent` event frames (recorded from a real Gateway, plus documented tool frames)
become streamed deltas, tool steps and a truthful result."""

from __future__ import annotations

import json
from typing import Any

from mcp_servers.agents.events import (
    MessageCompleted,
    MessageDelta,
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.parsers import RunFacts, build_result
from mcp_servers.agents.parsers.openclaw_gateway import OpenClawGatewayParser
from mcp_servers.agents.results import ErrorCode, OperatorResult
from tests.mcp_servers.agents.helpers import LOCAL_TRANSCRIPTS, read_lines

RUN = "bd9baac109c84dc9aeb0b78da0d5c9f6"
TEXT = "streamed from the gateway, in several chunks of text"


def frames() -> list[dict[str, Any]]:
    lines = read_lines(LOCAL_TRANSCRIPTS / "openclaw_real_gateway_frames.jsonl")
    return [json.loads(line) for line in lines]


def agent_frame(stream: str, data: dict[str, Any], run_id: str = RUN) -> dict[str, Any]:
    payload = {"runId": run_id, "sessionKey": "agent:main:explicit:s", "stream": stream}
    return {"type": "event", "event": "agent", "payload": {**payload, "data": data}}


def result_of(parser: OpenClawGatewayParser, **facts: Any) -> OperatorResult:
    return build_result(parser.acc, RunFacts(run_id="r", provider="openclaw", **facts))


def test_a_recorded_turn_streams_deltas_then_completes_with_the_whole_text() -> None:
    parser = OpenClawGatewayParser(run_id=RUN)
    events = [e for frame in frames() for e in parser.feed_frame(frame)]
    closing = parser.finish_with({"status": "ok", "startedAt": 1000, "endedAt": 4500})

    assert isinstance(events[0], SessionStarted)
    assert events[0].session_id == "13ddca58-4c3f-5ca1-8fa4-a931ec762445"
    deltas = [e.text for e in events if isinstance(e, MessageDelta)]
    assert len(deltas) == 3 and "".join(deltas) == TEXT
    assert [e.hint for e in events if isinstance(e, StateHint)] == ["gateway_run_ended"]
    assert closing == [MessageCompleted(text=TEXT)]
    assert parser.session_key == "agent:main:explicit:13ddca58-4c3f-5ca1-8fa4-a931ec762445"
    result = result_of(parser)
    assert (result.status, result.final_message) == ("success", TEXT)
    assert (result.metrics.output_tokens, result.metrics.duration_ms) == (13, 3500)


def test_frames_of_other_runs_and_other_events_are_ignored() -> None:
    parser = OpenClawGatewayParser(run_id=RUN)
    other = agent_frame("assistant", {"delta": "not ours", "text": "not ours"}, run_id="else")
    health = {"type": "event", "event": "health", "payload": {"ok": True}}

    assert parser.feed_frame(other) == [] and parser.feed_frame(health) == []


def test_tool_frames_become_tool_calls_and_results() -> None:
    # Shapes of the `tool` stream as OpenClaw documents them (concepts/agent-loop).
    parser = OpenClawGatewayParser(run_id=RUN)
    start = {"phase": "start", "name": "write", "toolCallId": "c1", "args": {"path": "a.md"}}
    done = {
        "phase": "result",
        "toolCallId": "c1",
        "isError": False,
        "result": {"content": [{"type": "text", "text": "Successfully wrote 3 bytes"}]},
    }
    events = [*parser.feed_frame(agent_frame("tool", start))]
    events += parser.feed_frame(agent_frame("tool", {"phase": "update", "toolCallId": "c1"}))
    events += parser.feed_frame(agent_frame("tool", done))

    assert events == [
        ToolCall(call_id="c1", name="write", input={"path": "a.md"}),
        ToolResult(call_id="c1", output="Successfully wrote 3 bytes"),
    ]
    parser.finish_with({"status": "ok"})
    assert result_of(parser).metrics.tool_calls == 1


def test_an_aborted_run_we_stopped_is_interrupted() -> None:
    parser = OpenClawGatewayParser(run_id=RUN)
    parser.feed_frame(agent_frame("assistant", {"delta": "partial", "text": "partial"}))
    parser.feed_frame(agent_frame("lifecycle", {"phase": "end", "aborted": True}))
    parser.finish_with({"status": "ok"})

    result = result_of(parser, stop_reason="interrupt")

    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED


def test_a_failed_or_timed_out_wait_is_a_failure_or_a_timeout() -> None:
    failed = OpenClawGatewayParser(run_id=RUN)
    message = "LLM request failed: network connection error."
    failed.finish_with({"status": "error", "error": message})
    timed_out = OpenClawGatewayParser(run_id=RUN)
    timed_out.finish_with({"status": "timeout"})

    failure = result_of(failed)
    assert failure.status == "failed" and failure.error is not None
    assert failure.error.code is ErrorCode.MODEL_UNREACHABLE
    assert failure.error.message == message
    assert result_of(timed_out).status == "timeout"


def test_no_answer_from_agent_wait_is_no_result() -> None:
    parser = OpenClawGatewayParser(run_id=RUN)
    parser.finish_with(None)

    result = result_of(parser)

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.NO_RESULT


def test_a_long_turn_among_other_runs_keeps_every_delta_and_tool_step_of_its_own() -> None:
    parser = OpenClawGatewayParser(run_id=RUN)
    text = ""
    events = []
    for i in range(5000):
        piece = f"w{i} "
        text += piece
        events += parser.feed_frame(agent_frame("assistant", {"delta": piece, "text": text}))
        events += parser.feed_frame(agent_frame("assistant", {"delta": "x", "text": "x"}, "b"))
        if i % 50 == 0:
            start = {"phase": "start", "name": "read", "toolCallId": f"c{i}", "args": {}}
            done = {"phase": "result", "toolCallId": f"c{i}", "result": f"r{i}"}
            events += parser.feed_frame(agent_frame("tool", start))
            events += parser.feed_frame(agent_frame("tool", done))
    closing = parser.finish_with({"status": "ok"})

    deltas = [e for e in events if isinstance(e, MessageDelta)]
    assert len(deltas) == 5000 and "".join(d.text for d in deltas) == text
    assert len([e for e in events if isinstance(e, ToolCall)]) == 100
    assert closing == [MessageCompleted(text=text)]
    assert result_of(parser).metrics.tool_calls == 100


def recorded_tool_frames() -> list[dict[str, Any]]:
    lines = read_lines(LOCAL_TRANSCRIPTS / "openclaw_real_gateway_tool_frames.jsonl")
    return [json.loads(line) for line in lines]


def test_a_recorded_tool_turn_gives_one_call_with_its_arguments_and_one_result() -> None:
    frames = recorded_tool_frames()
    parser = OpenClawGatewayParser(run_id=frames[0]["payload"]["runId"])
    events = [e for frame in frames for e in parser.feed_frame(frame)]
    parser.finish_with({"status": "ok"})

    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert calls == [
        ToolCall(
            call_id="call_w1", name="write", input={"path": "notes.md", "content": "# Notes\n"}
        )
    ]
    assert results == [
        ToolResult(call_id="call_w1", output="Successfully wrote 8 bytes to notes.md")
    ]
    assert result_of(parser).final_message == "wrote notes.md"
    assert result_of(parser).metrics.tool_calls == 1


def test_without_tool_events_the_item_frames_still_give_the_call_and_its_outcome() -> None:
    frames = [f for f in recorded_tool_frames() if f["payload"]["stream"] != "tool"]
    parser = OpenClawGatewayParser(run_id=frames[0]["payload"]["runId"])
    events = [e for frame in frames for e in parser.feed_frame(frame)]

    assert [e for e in events if isinstance(e, ToolCall | ToolResult)] == [
        ToolCall(call_id="call_w1", name="write"),
        ToolResult(call_id="call_w1", output="Write to notes.md (8 chars)"),
    ]
