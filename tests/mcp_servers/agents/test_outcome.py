"""How parser evidence and process facts combine into a run's status and error."""

from __future__ import annotations

from mcp_servers.agents.parsers import RunAccumulator, RunFacts, build_result
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
