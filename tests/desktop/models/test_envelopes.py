"""A task's envelopes as the author reads them: in reply order, each with a header and text, and
a strong agent's trace files from its result."""

from __future__ import annotations

from typing import Any

from desktop.models.envelopes import agent_name, describe, in_reply_order, trace_paths
from sidecar.protocol import EnvelopeInfo

WRITER = "thread/t1/task/a"
REVIEWER = "thread/t1/task/a/reviewer"


def envelope(
    envelope_id: str, kind: str, payload: dict[str, Any], reply_to: str | None = None, **fields: Any
) -> EnvelopeInfo:
    base: dict[str, Any] = {
        "id": envelope_id, "sender": WRITER, "receiver": REVIEWER, "kind": kind,
        "payload": payload, "reply_to": reply_to, "created_at": 1.0,
    }  # fmt: skip
    return EnvelopeInfo.model_validate(base | fields)


def review_loop() -> tuple[EnvelopeInfo, ...]:
    """Oldest first: a message from the main agent, draft 1, its rejection, draft 2 (replying
    to the review), its approval, the result; the message's answer came last."""
    return (
        envelope("m", "message", {"text": "Keep it short"}, sender="thread/t1", receiver=WRITER),
        envelope("d1", "artifact", {"round": 1, "text": "A long draft"}),
        envelope("r1", "review", {"round": 1, "verdict": "reject", "comments": "Too long"}, "d1",
                 sender=REVIEWER, receiver=WRITER),
        envelope("d2", "artifact", {"round": 2, "text": "Short"}, "r1"),
        envelope("r2", "review", {"round": 2, "verdict": "approve", "comments": "Good"}, "d2",
                 sender=REVIEWER, receiver=WRITER),
        envelope("f", "final", {"status": "succeeded", "findings": "Short"}, receiver="thread/t1"),
        envelope("ok", "message", {"text": "Noted"}, "m", sender=WRITER, receiver="thread/t1"),
    )  # fmt: skip


def test_replies_follow_what_they_answer_with_their_verdicts_and_comments():
    lines = in_reply_order(review_loop())
    assert [(line.envelope.id, line.depth) for line in lines] == [
        ("m", 0), ("ok", 1), ("d1", 0), ("r1", 1), ("d2", 2), ("r2", 3), ("f", 0),
    ]  # fmt: skip
    by_id = {line.envelope.id: line for line in lines}
    assert (by_id["r1"].header, by_id["r1"].body) == ("Review, round 1: changes asked", "Too long")
    assert by_id["r2"].header == "Review, round 2: approved"
    assert by_id["d2"].reply_to_header == "Review, round 1: changes asked"
    assert (by_id["d1"].header, by_id["d1"].body) == ("Draft, round 1", "A long draft")
    assert by_id["m"].header == "Message from the main agent"
    assert (by_id["f"].header, by_id["f"].body) == ("Result: succeeded", "Short")


def test_a_handoff_and_a_failed_result_say_what_happened():
    handoff = envelope("h", "handoff", {"from": "writer", "to": "coder", "reason": "stalled"})
    assert describe(handoff) == ("Handoff: writer → coder", "stalled")
    failed = envelope("e", "error", {"status": "failed", "findings": "", "error": "no disk"})
    assert describe(failed) == ("Result: failed", "Error: no disk")


def test_agents_are_named_in_plain_words():
    assert agent_name("thread/t1") == "main agent"
    assert agent_name(WRITER) == "task a"
    assert agent_name(REVIEWER) == "reviewer of task a"


def test_a_strong_agents_trace_files_come_from_its_latest_result():
    traces = {"raw": "/data/traces/r1/raw.txt", "normalized": "/data/traces/r1/events.jsonl"}
    envelopes = (
        envelope("e", "error", {"status": "failed", "traces": {"raw": "/old/raw.txt"}}),
        envelope("f", "final", {"status": "succeeded", "traces": traces}),
    )
    assert trace_paths(envelopes) == traces
    assert trace_paths(review_loop()) == {}
