"""A strong agent's stream as the coordinator reads it: its failure is classed by its normalized
error code (what no retry can mend -- not installed, not signed in, misconfigured, its model
unreachable -- is hopeless, a rate limit waits, the rest is transient), and only its own events
count as activity."""

from __future__ import annotations

import json

import pytest

from sidecar.plans.attempt import UsageSoFar
from sidecar.plans.strong import failure_class, progress_report


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("cli_not_found", "hopeless"),
        ("auth_failed", "hopeless"),
        ("configuration", "hopeless"),
        ("model_unreachable", "hopeless"),
        ("rate_limited", "rate_limited"),
        ("process_exited", "transient"),
        ("timeout", "transient"),
        ("api_error", "transient"),
        ("", "transient"),
    ],
)
def test_each_error_code_has_its_class(code: str, expected: str) -> None:
    assert failure_class(code) == expected


@pytest.mark.parametrize(
    ("event", "activity"),
    [
        ({"type": "heartbeat", "elapsed_s": 20.0, "idle_s": 15.0}, False),
        ({"type": "state_hint", "hint": "message_sent", "detail": {"text": "hi"}}, False),
        ({"type": "state_hint", "hint": "message_taken", "detail": {}}, True),
        ({"type": "tool_call", "call_id": "c", "name": "Write", "input": {}}, True),
        ({"type": "usage", "input_tokens": 5, "output_tokens": 2}, True),
    ],
)
def test_only_the_agents_own_events_count_as_its_activity(
    event: dict[str, object], activity: bool
) -> None:
    """A stall is no activity of the agent's: the agents server's beats and the messages it
    writes to the agent do not reset the stall clock."""
    report = progress_report(json.dumps(event))
    assert report.heartbeat is not activity


def test_usage_and_the_session_are_read_from_the_stream() -> None:
    used = progress_report(json.dumps({"type": "usage", "input_tokens": 40, "output_tokens": 9}))
    assert used.usage == UsageSoFar(49, None, tokens_in=40, tokens_out=9)
    started = progress_report(json.dumps({"type": "session_started", "session_id": "s-1"}))
    assert started.session_ref == "s-1"
