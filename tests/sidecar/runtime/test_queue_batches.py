"""What the next turn carries: an interrupt alone, a follow-up alone, else every queued message
of the oldest one's mode, with a delegated plan's announcements and the author's messages never
joined into one message."""

from __future__ import annotations

from sidecar.runtime.queueing import ANNOUNCEMENT_ID_PREFIX, next_batch
from sidecar.store.queue import QueuedRecord


def _queued(message_id: str, mode: str = "steer") -> QueuedRecord:
    return QueuedRecord(
        message_id, "t", mode, f"text of {message_id}", "queued", None, 0.0, None, None
    )


def test_the_authors_steer_messages_go_together_without_the_announcements() -> None:
    queued = [
        _queued("a1"),
        _queued(f"{ANNOUNCEMENT_ID_PREFIX}p1:r1"),
        _queued("a2"),
        _queued(f"{ANNOUNCEMENT_ID_PREFIX}p2:r2"),
    ]
    assert [r.id for r in next_batch(queued)] == ["a1", "a2"]
    rest = [r for r in queued if r.id not in {"a1", "a2"}]
    assert [r.id for r in next_batch(rest)] == [
        f"{ANNOUNCEMENT_ID_PREFIX}p1:r1",
        f"{ANNOUNCEMENT_ID_PREFIX}p2:r2",
    ]


def test_results_that_ended_together_are_one_turn_before_a_later_author_message() -> None:
    queued = [
        _queued(f"{ANNOUNCEMENT_ID_PREFIX}p1:r1"),
        _queued(f"{ANNOUNCEMENT_ID_PREFIX}p2:r2"),
        _queued("a1"),
    ]
    assert [r.id for r in next_batch(queued)] == [r.id for r in queued[:2]]


def test_an_interrupt_or_a_followup_still_goes_alone() -> None:
    assert [r.id for r in next_batch([_queued("a1"), _queued("i", "interrupt")])] == ["i"]
    assert [r.id for r in next_batch([_queued("f", "followup"), _queued("a1")])] == ["f"]


def test_the_queue_says_which_message_is_a_plans_report() -> None:
    from sidecar.runtime.queueing import queued_info

    assert queued_info(_queued(f"{ANNOUNCEMENT_ID_PREFIX}p1:r1")).announcement
    assert not queued_info(_queued("a1")).announcement
