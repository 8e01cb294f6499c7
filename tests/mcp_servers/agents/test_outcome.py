"""How parser evidence and process facts combine into a run's status and error."""

from __future__ import annotations

import json

import pytest

from mcp_servers.agents.parsers import ClaudeStreamParser, RunAccumulator, RunFacts, build_result
from mcp_servers.agents.parsers.outcome import stderr_summary
from mcp_servers.agents.results import ErrorCode, NormalizedError


def test_a_reported_success_wins_over_our_own_stop() -> None:
    acc = RunAccumulator(outcome="success", final_message="done")

    result = build_result(acc, RunFacts(run_id="r", provider="claude", stop_reason="timeout"))

    assert (result.status, result.error) == ("success", None)


def test_an_interrupt_wins_over_the_failure_it_caused() -> None:
    acc = RunAccumulator(
        outcome="failed", error=NormalizedError(code=ErrorCode.AGENT_ERROR, message="aborted")
    )

    result = build_result(acc, RunFacts(run_id="r", provider="claude", stop_reason="interrupt"))

    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED


def test_no_result_and_a_clean_exit_is_no_result_and_a_crash_is_process_exited() -> None:
    clean = build_result(RunAccumulator(), RunFacts(run_id="r", provider="codex", exit_code=0))
    crashed = build_result(
        RunAccumulator(),
        RunFacts(run_id="r", provider="codex", exit_code=2, stderr_tail="Error: bad flag\n"),
    )

    assert clean.error is not None and clean.error.code is ErrorCode.NO_RESULT
    assert crashed.error is not None and crashed.error.code is ErrorCode.PROCESS_EXITED
    assert crashed.error.detail["exit_code"] == 2


def test_stderr_summary_names_the_error_line_not_the_backtrace() -> None:
    # stderr shape of codex-cli 0.169.0 resuming an unknown thread.
    tail = (
        "WARNING: proceeding, even though we could not create PATH aliases\n"
        "Error: thread/resume: thread/resume failed: no rollout found for thread id x\n\n"
        "Stack backtrace:\n   0: <unknown>\n   1: <unknown>\n"
    )

    assert stderr_summary(tail).endswith("no rollout found for thread id x")
    assert stderr_summary("just one line\n") == "just one line"
    assert stderr_summary("") == ""


def test_a_reported_success_with_a_non_zero_exit_and_no_answer_is_not_a_success() -> None:
    for provider in ("claude", "codex", "openclaw"):
        hollow = build_result(
            RunAccumulator(outcome="success"),
            RunFacts(run_id="r", provider=provider, exit_code=1, stderr_tail="Error: boom\n"),
        )

        assert hollow.status == "failed"
        assert hollow.error is not None and hollow.error.code is ErrorCode.PROCESS_EXITED


def test_a_reported_success_with_an_answer_survives_a_non_zero_exit() -> None:
    acc = RunAccumulator(outcome="success", final_message="done")

    result = build_result(acc, RunFacts(run_id="r", provider="codex", exit_code=1))

    assert (result.status, result.final_message) == ("success", "done")


def test_an_exit_by_sigint_is_interrupted() -> None:
    for code in (130, -2):
        result = build_result(
            RunAccumulator(), RunFacts(run_id="r", provider="openclaw", exit_code=code)
        )

        assert result.status == "interrupted"
        assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
        assert result.error.detail["exit_code"] == code


def test_a_reported_tool_count_wins_over_fewer_seen_tool_calls() -> None:
    acc = RunAccumulator(outcome="success", final_message="ok", reported_tool_calls=3)

    result = build_result(acc, RunFacts(run_id="r", provider="openclaw", exit_code=0))

    assert result.metrics.tool_calls == 3


@pytest.mark.parametrize("reason", ["aborted_tools", "aborted_streaming"])
def test_a_claude_turn_the_cli_reports_aborted_is_interrupted_not_failed(reason: str) -> None:
    # Real shape (Claude Code 2.1.233 and later): what a stopped turn ends with.
    line = {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "num_turns": 2,
        "stop_reason": None,
        "session_id": "s",
        "terminal_reason": reason,
        "errors": ["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"],
    }
    parser = ClaudeStreamParser()
    parser.feed(json.dumps(line))

    result = build_result(parser.acc, RunFacts(run_id="r", provider="claude", exit_code=0))

    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert result.error.detail["terminal_reason"] == reason


def test_a_cli_reported_failure_that_is_no_interruption_stays_failed() -> None:
    acc = RunAccumulator(
        outcome="failed", error=NormalizedError(code=ErrorCode.MAX_TURNS, message="max turns")
    )

    result = build_result(acc, RunFacts(run_id="r", provider="claude", exit_code=1))

    assert result.status == "failed"
    assert result.error is not None and result.error.code is ErrorCode.MAX_TURNS
