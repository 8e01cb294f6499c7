"""OpenClaw `agent --json` output (one document after log lines) parses into events/results."""

from __future__ import annotations

from mcp_servers.agents.events import Completed, Failed, MessageCompleted, SessionStarted
from mcp_servers.agents.parsers import OpenClawOutputParser, replay_lines
from mcp_servers.agents.results import ErrorCode
from tests.mcp_servers.agents.helpers import LOCAL_TRANSCRIPTS, read_lines


def test_gateway_document_after_log_lines_is_found_and_normalized() -> None:
    events, result = replay_lines(
        "openclaw", read_lines(LOCAL_TRANSCRIPTS / "openclaw_gateway.txt")
    )

    assert events[0] == SessionStarted(session_id="oc-session-42", model="claude-sonnet-4-6")
    assert events[1] == MessageCompleted(text="Drafted the chapter outline.")
    assert events[2] == MessageCompleted(text="Saved it as outline.md.")
    final = "Drafted the chapter outline.\n\nSaved it as outline.md."
    assert events[-1] == Completed(session_id="oc-session-42", final_message=final)

    assert result.status == "success"
    assert result.final_message == final
    metrics = result.metrics
    assert (metrics.input_tokens, metrics.output_tokens) == (1200, 340)
    assert (metrics.cache_read_tokens, metrics.cache_write_tokens) == (800, 64)
    assert (metrics.duration_ms, metrics.turns) == (4200, 1)
    # The two log lines before the document are not JSON events.
    assert any("non-JSON" in note for note in result.notes)


def test_local_aborted_run_with_meta_error_fails() -> None:
    events, result = replay_lines(
        "openclaw", read_lines(LOCAL_TRANSCRIPTS / "openclaw_local_error.txt")
    )

    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code is ErrorCode.AGENT_ERROR
    assert result.error.message == "Context window exceeded"
    assert result.session is not None
    assert result.session.session_id == "oc-local-1"
    assert isinstance(events[-1], Failed)


def test_output_without_a_document_has_no_result() -> None:
    parser = OpenClawOutputParser(session_hint="hint-1")
    for line in ["Gateway agent failed; falling back to embedded", "Error: boom"]:
        parser.feed(line)

    assert parser.finish() == []
    assert parser.acc.outcome is None
    assert parser.acc.non_json_lines == 2


def test_gateway_timeout_status_maps_to_timeout() -> None:
    _, result = replay_lines(
        "openclaw", ['{"runId": "r", "status": "timeout", "summary": "agent timed out"}']
    )

    assert result.status == "timeout"
    assert result.error is not None
    assert (result.error.code, result.error.message) == (ErrorCode.TIMEOUT, "agent timed out")
