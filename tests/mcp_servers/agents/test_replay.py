"""`python -m mcp_servers.agents.replay` prints normalized events and the result as JSON lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp_servers.agents.events import Completed, Failed, load_event
from mcp_servers.agents.results import ErrorCode, OperatorResult
from tests.mcp_servers.agents.helpers import shared_transcript

REPO = Path(__file__).parents[3]


def test_replay_prints_events_then_the_operator_result() -> None:
    transcript = shared_transcript("codex_3.jsonl")

    completed = subprocess.run(
        [sys.executable, "-m", "mcp_servers.agents.replay", "codex", str(transcript)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    lines = completed.stdout.splitlines()
    events = [load_event(line) for line in lines[:-1]]
    result = OperatorResult.model_validate_json(lines[-1])
    assert [e.type for e in events] == [
        "session_started",
        "state_hint",
        "message_completed",
        "usage",
        "state_hint",
        "completed",
    ]
    assert events[-1] == Completed(
        session_id="019fe041-fb59-77a0-bce2-6d07f49e917c", final_message="hello"
    )
    assert (result.status, result.final_message, result.run_id) == ("success", "hello", "codex_3")


def test_replay_rejects_an_unknown_provider() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mcp_servers.agents.replay", "gemini", "x.jsonl"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert completed.returncode == 2
    assert completed.stdout == ""


def test_a_claude_run_the_author_stopped_replays_as_interrupted_not_failed() -> None:
    # Issue 24's held-back case: the aborted result (error_during_execution, aborted_tools).
    transcript = shared_transcript("claude_7.jsonl")

    completed = subprocess.run(
        [sys.executable, "-m", "mcp_servers.agents.replay", "claude", str(transcript)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    lines = completed.stdout.splitlines()
    result = OperatorResult.model_validate_json(lines[-1])
    assert result.status == "interrupted"
    assert result.error is not None and result.error.code is ErrorCode.INTERRUPTED
    assert result.error.detail["terminal_reason"] == "aborted_tools"
    last = load_event(lines[-2])
    assert isinstance(last, Failed) and last.status == "interrupted"
