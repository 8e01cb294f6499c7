"""Messages typed while a turn runs: sent with a mode, shown under the turn with their receipt,
withdrawn or taken back into the composer until they are delivered."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.queue import QueueController
from desktop.views.main_window import MainWindow
from desktop.views.queue_strip import QueueStrip
from sidecar.protocol import (
    QueuedMessageInfo,
    QueueRef,
    QueueUpdateParams,
    RunRef,
    RunStarted,
    RunStartParams,
)
from tests.desktop.support import FakeSender, RunScript, announcement_text
from tests.desktop.views.test_main_window import build_window


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """The main window's test window, with a queue controller (so with the strip)."""
    return build_window(qtbot, fake_sender, queue=QueueController(fake_sender.api))


def _queued(message_id: str, text: str, status: str = "queued", mode: str = "steer"):
    return QueueUpdateParams(
        message=QueuedMessageInfo.model_validate(
            {
                "id": message_id,
                "thread_id": "t1",
                "mode": mode,
                "text": text,
                "status": status,
                "created_at": float(len(message_id)),
                "announcement": message_id.startswith("announce:"),  # as the sidecar marks it
            }
        )
    )


def _running(window: MainWindow, fake_sender: FakeSender) -> None:
    window.controller.send_message("Draft the opening")
    _, pending = fake_sender.last("run/start")
    pending.resolve(RunRef(run_id="r1"))
    window.controller.handle_run_event(RunScript()(RunStarted()))


def _strip(window: MainWindow) -> tuple[QueueController, QueueStrip]:
    assert window.queue is not None and window.queue_strip is not None
    return window.queue, window.queue_strip


def test_enter_during_a_run_queues_in_the_default_mode_and_alt_enter_interrupts(
    qtbot: QtBot,
    window: MainWindow,
    fake_sender: FakeSender,
):
    _running(window, fake_sender)
    qtbot.keyClicks(window.composer.editor, "also the tide")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    params, _ = fake_sender.last("run/start")
    assert params == RunStartParams(thread_id="t1", text="also the tide", mode=None)
    assert not window.transcript.plain_text().endswith("also the tide")
    qtbot.keyClicks(window.composer.editor, "no, the sea")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.AltModifier)
    params, _ = fake_sender.last("run/start")
    assert params == RunStartParams(thread_id="t1", text="no, the sea", mode="interrupt")


def test_queued_messages_show_under_the_turn_and_can_be_withdrawn_or_edited(
    qtbot: QtBot,
    window: MainWindow,
    fake_sender: FakeSender,
):
    queue, strip = _strip(window)
    assert strip.isHidden()
    queue.handle_update(_queued("q1", "also the tide"))
    queue.handle_update(_queued("q22", "and the moon", mode="followup"))
    assert [label.text() for _, label, _, _ in strip.rows] == [
        "steer · queued: also the tide",
        "followup · queued: and the moon",
    ]
    assert strip.isVisible()
    _, _, _, withdraw = strip.rows[1]
    qtbot.mouseClick(withdraw, Qt.MouseButton.LeftButton)
    params, pending = fake_sender.last("queue/withdraw")
    assert params == QueueRef(thread_id="t1", message_id="q22")
    pending.resolve(_queued("q22", "and the moon", status="withdrawn").message)
    assert [info.id for info, *_ in strip.rows] == ["q1"]
    _, _, edit, _ = strip.rows[0]
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    _, pending = fake_sender.last("queue/withdraw")
    pending.resolve(_queued("q1", "also the tide", status="withdrawn").message)
    assert window.composer.editor.toPlainText() == "also the tide"
    assert strip.rows == [] and strip.isHidden()


def test_a_message_taken_back_to_edit_keeps_what_the_author_typed_since(
    qtbot: QtBot,
    window: MainWindow,
    fake_sender: FakeSender,
):
    queue, strip = _strip(window)
    queue.handle_update(_queued("q1", "also the tide"))
    qtbot.keyClicks(window.composer.editor, "and the gulls")
    _, _, edit, _ = strip.rows[0]
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    _, pending = fake_sender.last("queue/withdraw")
    pending.resolve(_queued("q1", "also the tide", status="withdrawn").message)
    assert window.composer.editor.toPlainText() == "also the tide\n\nand the gulls"


def test_a_delivered_message_cannot_change_and_an_answered_one_leaves_the_strip(
    window: MainWindow,
    fake_sender: FakeSender,
):
    queue, strip = _strip(window)
    queue.handle_update(_queued("q1", "also the tide", status="delivered"))
    assert window.transcript.plain_text().endswith("also the tide")
    _, label, edit, withdraw = strip.rows[0]
    assert label.text() == "steer · delivered: also the tide"
    assert not edit.isEnabled() and not withdraw.isEnabled()
    queue.handle_update(_queued("q1", "also the tide", status="answered"))
    assert strip.rows == []
    queue.handle_update(
        _queued("q5", "another thread's", status="queued").model_copy(
            update={"message": _queued("q5", "x").message.model_copy(update={"thread_id": "t2"})}
        )
    )
    assert strip.rows == []


def test_a_plans_report_waiting_for_the_turn_shows_by_its_header_and_cannot_be_changed(
    window: MainWindow,
):
    queue, strip = _strip(window)
    queue.handle_update(_queued("announce:p1:bg", announcement_text("p1", "failed")))
    [(_info, label, edit, withdraw)] = strip.rows
    assert label.text() == "result · queued: Plan p1 finished: failed"
    assert not edit.isEnabled() and not withdraw.isEnabled()
