"""A delegated plan's report in the window's transcript: a row of its own kind ("Result of a
delegated plan", "Plan <id> finished: <status>" over the report), never the author's message,
when it is delivered live from the queue and when the thread is opened again."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.queue import QueueController
from desktop.models.transcript_entries import AnnouncementEntry
from desktop.views.main_window import MainWindow
from desktop.views.transcript_render import ANNOUNCEMENT_MARK
from sidecar.protocol import (
    MessageEvent,
    QueuedMessageInfo,
    QueueUpdateParams,
    RunFinished,
    RunStarted,
    ThreadGetResult,
    Token,
)
from tests.desktop.support import (
    FakeSender,
    RunScript,
    announcement_text,
    message,
    thread_info,
)
from tests.desktop.views.test_main_window import build_window

REPORT = "Plan p1: completed.\n[succeeded] a (writer): the river is wide"
TOLD = "The team found that the river is wide."


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    return build_window(qtbot, fake_sender, queue=QueueController(fake_sender.api))


def delivered(text: str) -> QueueUpdateParams:
    """The queue's notice that the sidecar's queued announcement reached its turn."""
    info = QueuedMessageInfo(
        id="announce:p1:bg", thread_id="t1", mode="steer", text=text, status="delivered",
        run_id="r2", created_at=2.0, delivered_at=3.0, announcement=True,
    )  # fmt: skip
    return QueueUpdateParams(message=info)


def announcement_rows(window: MainWindow) -> list[tuple[int, AnnouncementEntry]]:
    entries = window.state.transcript.entries
    return [(row, e) for row, e in enumerate(entries) if isinstance(e, AnnouncementEntry)]


def assert_shown_as_a_plan_result(window: MainWindow, row: int) -> None:
    view = window.transcript
    assert view.shown_text(row) == "Plan p1 finished: completed\n" + REPORT
    index = view.model.index(row)
    assert "not typed by you" in view.model.data(index, Qt.ItemDataRole.ToolTipRole)
    rect = view.list_view.visualRect(index)
    assert rect.isValid() and not view.list_view.viewport().grab(rect).isNull()  # painted


def test_a_plan_result_delivered_from_the_queue_is_its_own_row_then_the_agent_answers(
    qtbot: QtBot, window: MainWindow
):
    assert window.queue is not None
    window.queue.handle_update(delivered(announcement_text("p1", "completed", REPORT)))
    [(row, entry)] = announcement_rows(window)
    assert entry.header == "Plan p1 finished: completed"
    assert_shown_as_a_plan_result(window, row)
    assert window.transcript.plain_text().endswith(
        f"{ANNOUNCEMENT_MARK}Plan p1 finished: completed\n{REPORT}"
    )
    run = RunScript(run_id="r2")  # the turn that took it, started by itself
    for event in (RunStarted(), Token(text=TOLD), RunFinished()):
        window.controller.handle_run_event(run(event))
    assert window.transcript.plain_text().endswith(TOLD)
    assert [type(e).__name__ for e in window.state.transcript.entries[-2:]] == [
        "AnnouncementEntry",
        "MessageEntry",
    ]


def test_a_reopened_thread_shows_the_plan_result_as_its_own_row(
    window: MainWindow, fake_sender: FakeSender
):
    text = announcement_text("p1", "completed", REPORT)
    window.controller.select_thread("t2")
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=thread_info("t2"), messages=(), interrupts=(), status="idle")
    )
    window.controller.select_thread("t1")
    messages = (
        message("user", "earlier", "m0"),
        message("user", text, "m1", announcement=True),
        message("assistant", TOLD, "m2"),
    )
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=thread_info("t1"), messages=messages, interrupts=(), status="idle")
    )
    [(row, entry)] = announcement_rows(window)
    assert (row, entry.message_id) == (1, "m1")
    assert_shown_as_a_plan_result(window, row)


def test_an_announcement_arriving_as_a_message_event_is_its_own_row(window: MainWindow):
    text = announcement_text("p1", "completed", REPORT)
    run = RunScript(run_id="r3")
    window.controller.handle_run_event(run(RunStarted()))
    window.controller.handle_run_event(
        run(MessageEvent(message=message("user", text, "m5", announcement=True)))
    )
    [(row, _entry)] = announcement_rows(window)
    assert_shown_as_a_plan_result(window, row)
