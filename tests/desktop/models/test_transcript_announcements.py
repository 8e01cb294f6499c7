"""A delegated plan's announcement is a transcript row of its own kind: live (delivered from the
queue, or as a message event), and read back from the thread."""

from __future__ import annotations

from desktop.models.transcript import Transcript
from desktop.models.transcript_entries import (
    AnnouncedPlan,
    AnnouncementEntry,
    MessageEntry,
    parse_announcement,
)
from sidecar.protocol import MessageEvent
from tests.desktop.support import announcement_text, message


def test_an_announcement_names_its_plan_how_it_ended_and_its_report():
    text = announcement_text("p1", "failed", "Plan p1: failed.\n[failed] a (writer): no disk")
    assert parse_announcement(text) == (
        AnnouncedPlan("p1", "failed", "Plan p1: failed.\n[failed] a (writer): no disk"),
    )
    assert AnnouncedPlan("p1", "failed", "").header == "Plan p1 finished: failed"


def test_plans_that_ended_together_are_each_reported_under_their_own_header():
    text = (
        announcement_text("p1", "completed", "one")
        + "\n\n"
        + announcement_text("p2", "aborted", "two")
    )
    plans = parse_announcement(text)
    assert [(p.plan_id, p.status, p.report) for p in plans] == [
        ("p1", "completed", "one"),
        ("p2", "aborted", "two"),
    ]
    entry = AnnouncementEntry("user", text, plans=plans)
    assert entry.header == "2 plans finished: p1 completed, p2 aborted"


def test_a_message_event_of_an_announcement_becomes_its_row_not_the_authors_message():
    transcript = Transcript()
    transcript.clear("t1")
    text = announcement_text("p1")
    transcript.apply(MessageEvent(message=message("user", text, "m1", announcement=True)))
    transcript.apply(MessageEvent(message=message("user", "Thanks", "m2")))
    first, second = transcript.entries
    assert isinstance(first, AnnouncementEntry) and first.message_id == "m1"
    assert first.header == "Plan p1 finished: completed" and first.text == text
    assert type(second) is MessageEntry and second.text == "Thanks"


def test_an_announcement_delivered_from_the_queue_is_its_row_at_once_and_adopts_its_id():
    transcript = Transcript()
    transcript.clear("t1")
    text = announcement_text("p1")
    transcript.add_local_message(text, announcement=True)
    [entry] = transcript.entries
    assert isinstance(entry, AnnouncementEntry) and entry.local
    transcript.apply(MessageEvent(message=message("user", text, "m9", announcement=True)))
    assert transcript.entries == (entry,) and not entry.local and entry.message_id == "m9"


def test_a_reopened_thread_shows_its_announcements_as_their_rows_and_pages_by_them():
    text = announcement_text("p1")
    messages = (
        message("user", "Delegate it", "m1"),
        message("user", text, "m2", announcement=True),
        message("assistant", "The team's work is done.", "m3"),
    )
    transcript = Transcript()
    transcript.load("t1", messages)
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == ["MessageEntry", "AnnouncementEntry", "MessageEntry"]
    assert transcript.row_of_message("m2") == 1
    older = Transcript()
    older.load("t1", messages[1:])
    assert older.oldest_message_id() == "m2"  # the cursor for the page before it


def test_a_plan_is_named_by_its_goal_when_its_report_gives_one():
    report = "Plan plan-call_4f2a: completed.\nGoal: Draft chapter two\n- [succeeded] a (Draft)"
    text = announcement_text("plan-call_4f2a", "completed", report)
    [plan] = parse_announcement(text)

    assert plan.goal == "Draft chapter two"
    assert plan.header == "Plan “Draft chapter two” finished: completed"
    both = AnnouncementEntry("user", text, plans=(plan, AnnouncedPlan("p2", "failed", "")))
    assert both.header == "2 plans finished: “Draft chapter two” completed, p2 failed"
