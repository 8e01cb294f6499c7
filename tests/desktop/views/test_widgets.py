"""Composer and status widgets against their models (the transcript view: test_transcript_view)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.models.inbox import InterruptInbox
from desktop.models.threads import RunState
from desktop.views.composer import ComposerWidget
from desktop.views.status_widgets import (
    InterruptInboxWidget,
    RunStatusWidget,
    SidecarBannerWidget,
)
from sidecar.protocol import (
    QuestionInterrupt,
)


def test_enter_sends_and_shift_enter_adds_a_line(qtbot: QtBot):
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    qtbot.keyClicks(composer.editor, "first")
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer.editor, "second")
    with qtbot.waitSignal(composer.message_submitted) as submitted:
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert submitted.args == ["first\nsecond"]
    assert composer.editor.toPlainText() == ""


def test_a_busy_composer_still_sends_to_be_queued_and_alt_enter_interrupts(qtbot: QtBot):
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.editor.setPlainText("draft")
    composer.set_busy(True)
    sent: list[str] = []
    interrupts: list[str] = []
    composer.message_submitted.connect(sent.append)
    composer.interrupt_submitted.connect(interrupts.append)
    assert composer.send_button.text() == "Queue" and composer.editor.isEnabled()
    qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    assert sent == ["draft"]
    qtbot.keyClicks(composer.editor, "stop that")
    qtbot.keyClick(composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.AltModifier)
    assert interrupts == ["stop that"] and composer.editor.toPlainText() == ""
    composer.set_busy(False)
    assert composer.send_button.text() == "Send"


def test_run_status_offers_cancel_while_running_and_retry_after_failure(qtbot: QtBot):
    status = RunStatusWidget()
    qtbot.addWidget(status)
    status.show()
    status.show_state(RunState("running", node="planner"), 0)
    assert status.status_label.text() == "Thinking…"
    assert status.cancel_button.isVisible() and not status.retry_button.isVisible()
    status.show_state(RunState("failed", error="down"), 0)
    assert status.retry_button.isVisible() and not status.cancel_button.isVisible()
    with qtbot.waitSignal(status.retry_requested):
        qtbot.mouseClick(status.retry_button, Qt.MouseButton.LeftButton)


def test_the_banner_reports_deaths_restarts_and_giving_up(qtbot: QtBot):
    banner = SidecarBannerWidget()
    qtbot.addWidget(banner)
    banner.show_died(3, "Traceback\nValueError: boom\n")
    assert banner.isVisible() and banner.state == "died"
    assert "boom" in banner.toolTip()
    banner.show_restarted()
    assert banner.state == "restarted" and not banner.restart_button.isVisible()
    banner.show_gave_up()
    assert banner.restart_button.isVisible()
    with qtbot.waitSignal(banner.restart_requested):
        qtbot.mouseClick(banner.restart_button, Qt.MouseButton.LeftButton)


def test_the_inbox_indicator_counts_and_opens_interrupts(qtbot: QtBot):
    inbox = InterruptInbox()
    widget = InterruptInboxWidget(inbox)
    qtbot.addWidget(widget)
    assert not widget.isEnabled()
    inbox.add("t1", QuestionInterrupt(id="q1", title="Colour?", body="", question="?"))
    assert widget.isEnabled() and widget.text() == "Waiting: 1"
    (action,) = widget.menu().actions()
    with qtbot.waitSignal(widget.interrupt_activated) as activated:
        action.trigger()
    assert activated.args == ["t1", "q1"]
