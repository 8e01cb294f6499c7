"""Codex `exec --json` transcripts parse into the expected events and results.

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
    SessionStarted,
    StateHint,
    ToolCall,
    ToolResult,
)
from mcp_servers.agents.parsers import CodexStreamParser, replay_lines
from mcp_servers.agents.results import Artifact, ErrorCode
from tests.mcp_servers.agents.helpers import read_lines, shared_transcript


def test_command_execution_becomes_a_tool_call_and_its_result() -> None:
    events, result = replay_lines("codex", read_lines(shared_transcript("codex_1.jsonl")))

    thread = "019fe042-697a-79a0-8b8e-7a1a9551fde5"
    final = "The output is:\n\n```text\nvincent-fixture\n```"
    assert events[0] == SessionStarted(session_id=thread)
    assert events[2] == ToolCall(
        call_id="item_0",
        name="command_execution",
        input={"command": "pwsh -Command 'echo vincent-fixture'"},
    )
    assert events[3] == ToolResult(call_id="item_0", output="vincent-fixture\r\n", exit_code=0)
    assert events[4] == MessageCompleted(text=final, message_id="item_1")
    assert events[-1] == Completed(session_id=thread, final_message=final)

    assert result.status == "success"
    assert result.final_message == final
    metrics = result.metrics
    assert (metrics.input_tokens, metrics.cache_read_tokens) == (28858, 16128)
    assert (metrics.output_tokens, metrics.reasoning_tokens) == (196, 87)
    assert (metrics.turns, metrics.tool_calls) == (1, 1)
    assert metrics.cost_usd is None


def test_turn_failed_after_an_api_error_is_a_failure_and_item_errors_are_warnings() -> None:
    events, result = replay_lines("codex", read_lines(shared_transcript("codex_2.jsonl")))

    warning = events[1]
    assert isinstance(warning, StateHint)
    assert warning.hint == "warning"
    assert str(warning.detail["message"]).startswith("Model metadata for `gpt-5.6-sol` not found")
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.session_id == "019fe040-c131-7d31-a9bd-83df751b4d4a"

    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code is ErrorCode.API_ERROR
    assert result.error.detail == {"status": 400}
    assert result.error.message == (
        "The 'gpt-5.6-sol' model requires a newer version of Codex. "
        "Please upgrade to the latest app or CLI and try again."
    )
    assert result.final_message is None


def test_minimal_success_reads_the_single_agent_message() -> None:
    _, result = replay_lines("codex", read_lines(shared_transcript("codex_3.jsonl")))

    assert result.status == "success"
    assert result.session is not None
    assert result.session.session_id == "019fe041-fb59-77a0-bce2-6d07f49e917c"
    assert result.final_message == "hello"
    assert (result.metrics.input_tokens, result.metrics.cache_read_tokens) == (14312, 2432)
    assert (result.metrics.output_tokens, result.metrics.reasoning_tokens) == (32, 25)


def test_reasoning_items_go_to_the_thinking_channel() -> None:
    events, result = replay_lines("codex", read_lines(shared_transcript("codex_4.jsonl")))

    messages = [e for e in events if isinstance(e, MessageCompleted)]
    assert [m.channel for m in messages] == ["thinking"] * 4 + ["text"]
    assert messages[0].text == (
        "**Designing shortest subarray sum algorithm**\n"
        "**Validating deque popping correctness**\n"
        "**Formulating deque invariant properties**"
    )
    assert result.final_message is not None
    assert result.final_message.startswith("Let `P[i]` be the sum of the first `i` elements:")
    assert result.final_message.endswith("after a large negative value.")
    metrics = result.metrics
    assert (metrics.input_tokens, metrics.cache_read_tokens, metrics.cache_write_tokens) == (
        17792,
        0,
        0,
    )
    assert (metrics.output_tokens, metrics.reasoning_tokens) == (3333, 1957)


def test_plan_commands_and_file_change_are_normalized() -> None:
    events, result = replay_lines("codex", read_lines(shared_transcript("codex_5.jsonl")))

    plans = [e for e in events if isinstance(e, StateHint) and e.hint == "plan"]
    assert len(plans) == 5  # started, three updates, completed
    first_items = plans[0].detail["items"]
    assert isinstance(first_items, list)
    assert [i["completed"] for i in first_items if isinstance(i, dict)] == [False, False, False]
    last_items = plans[-1].detail["items"]
    assert isinstance(last_items, list)
    assert [i["completed"] for i in last_items if isinstance(i, dict)] == [True, True, True]

    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.call_id, c.name) for c in calls] == [
        ("item_2", "command_execution"),
        ("item_4", "command_execution"),
        ("item_5", "file_change"),
        ("item_6", "command_execution"),
    ]
    assert calls[0].input == {"command": "/bin/zsh -lc 'ls -la'"}
    git_status = next(e for e in events if isinstance(e, ToolResult) and e.call_id == "item_6")
    assert (git_status.output, git_status.exit_code) == (" M notes.txt\n", 0)
    path = "/private/tmp/codexcap/notes.txt"
    assert ArtifactCreated(path=path, change="modified", call_id="item_5") in events

    assert result.status == "success"
    assert result.session is not None
    assert result.session.session_id == "01a0586e-5a43-7001-9628-cde66a53e993"
    assert result.final_message == (
        "Done.\n\n- `ls -la`: found `.git/` and `notes.txt`.\n"
        "- Appended `second` to `notes.txt`.\n- `git status --short`: `M notes.txt`"
    )
    assert result.artifacts == (Artifact(path=path, change="modified"),)
    metrics = result.metrics
    assert (metrics.input_tokens, metrics.cache_read_tokens, metrics.cache_write_tokens) == (
        133712,
        113920,
        0,
    )
    assert (metrics.output_tokens, metrics.reasoning_tokens, metrics.tool_calls) == (937, 314, 4)


def test_resumed_thread_reports_the_same_thread_id() -> None:
    _, original = replay_lines("codex", read_lines(shared_transcript("codex_5.jsonl")))
    _, resumed = replay_lines("codex", read_lines(shared_transcript("codex_6.jsonl")))

    assert original.session == resumed.session
    assert resumed.final_message == "`ls -la`"
    assert (resumed.metrics.input_tokens, resumed.metrics.output_tokens) == (22904, 28)


def test_documented_sample_without_exit_code_on_start_parses() -> None:
    events, result = replay_lines("codex", read_lines(shared_transcript("codex_8.jsonl")))

    assert events[2] == MessageCompleted(
        text="**Searching for README files**", message_id="item_0", channel="thinking"
    )
    assert (
        ToolCall(call_id="item_1", name="command_execution", input={"command": "bash -lc ls"})
        in events
    )
    listing = next(e for e in events if isinstance(e, ToolResult))
    assert listing.exit_code == 0
    assert not listing.is_error
    assert "README.md" in listing.output
    assert result.final_message == "Yep \u2014 there\u2019s a `README.md` in the repository root."
    assert (result.metrics.input_tokens, result.metrics.cache_read_tokens) == (24763, 24448)
    assert result.metrics.output_tokens == 122
    assert result.metrics.reasoning_tokens is None


def test_failed_and_declined_commands_are_errors_and_declined_is_a_denial() -> None:
    parser = CodexStreamParser()
    failed = parser.feed(
        '{"type":"item.completed","item":{"id":"item_9","type":"command_execution",'
        '"command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}'
    )
    result = next(e for e in failed.events if isinstance(e, ToolResult))
    assert (result.is_error, result.denied, result.exit_code) == (True, True, None)


def test_top_level_error_without_turn_failed_becomes_the_failure() -> None:
    events, result = replay_lines(
        "codex",
        ['{"type":"thread.started","thread_id":"t1"}', '{"type":"error","message":"stream lost"}'],
    )

    assert result.status == "failed"
    assert result.error is not None
    assert (result.error.code, result.error.message) == (ErrorCode.AGENT_ERROR, "stream lost")
    assert isinstance(events[-1], Failed)


def test_reconnect_notices_are_retries_not_failures() -> None:
    # Shape observed from codex-cli 0.169.0 without network access.
    events, result = replay_lines(
        "codex",
        [
            '{"type":"thread.started","thread_id":"t2"}',
            '{"type":"turn.started"}',
            '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before '
            'completion: failed to lookup address information: Name does not resolve)"}',
        ],
    )

    assert [e.hint for e in events if isinstance(e, StateHint)] == ["turn_started", "retrying"]
    assert result.error is not None
    assert result.error.code is ErrorCode.NO_RESULT


@pytest.mark.parametrize(
    ("message", "code", "status"),
    [
        # What codex-cli 0.169.0 printed for scripted 400 / 401 / 429 / 500 answers.
        (
            '{"error": {"message": "bad", "type": "invalid_request_error", "param": null}}',
            ErrorCode.API_ERROR,
            None,
        ),
        ("unexpected status 401 Unauthorized: no, url: http://x/v1", ErrorCode.AUTH_FAILED, 401),
        ("exceeded retry limit, last status: 429 Too Many Requests", ErrorCode.RATE_LIMITED, 429),
        (
            "We\u2019re currently experiencing high demand, which may cause temporary errors.",
            ErrorCode.API_ERROR,
            None,
        ),
    ],
)
def test_model_api_failures_are_classified_by_the_status_codex_reports(
    message: str, code: ErrorCode, status: int | None
) -> None:
    failed = json.dumps({"type": "turn.failed", "error": {"message": message}})
    _, result = replay_lines("codex", ['{"type":"thread.started","thread_id":"t1"}', failed])

    assert result.error is not None
    assert result.error.code is code
    assert result.error.detail.get("status") == status
