"""Composer, transcript view and status widgets against their models."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.models.inbox import InterruptInbox
from desktop.models.threads import RunState
from desktop.models.transcript import Transcript
from desktop.views.composer import ComposerWidget
from desktop.views.status_widgets import (
    InterruptInboxWidget,
    RunStatusWidget,
    SidecarBannerWidget,
)
from desktop.views.transcript_view import MessageWidget, ToolCallWidget, TranscriptView
from sidecar.protocol import (
    MessageEvent,
    QuestionInterrupt,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)
from tests.desktop.support import message


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


def test_a_busy_composer_sends_nothing_and_keeps_the_draft(qtbot: QtBot):
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.editor.setPlainText("draft")
    composer.set_busy(True)
    sent: list[str] = []
    composer.message_submitted.connect(sent.append)
    qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    assert sent == [] and not composer.editor.isEnabled()
    composer.set_busy(False)
    qtbot.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    assert sent == ["draft"]


def test_the_transcript_view_streams_tokens_into_one_message(qtbot: QtBot):
    transcript = Transcript()
    view = TranscriptView(transcript)
    qtbot.addWidget(view)
    transcript.add_local_message("hello")
    transcript.apply(Token(text="Hi "))
    transcript.apply(Token(text="there"))
    assert len(view.entry_widgets) == 2
    streaming = view.entry_widgets[1]
    assert isinstance(streaming, MessageWidget)
    assert streaming.plain_text().startswith("Hi there")
    transcript.apply(MessageEvent(message=message("assistant", "Hi there.", "m2")))
    assert streaming.plain_text() == "Hi there."
    assert streaming.text_label.textFormat() == Qt.TextFormat.MarkdownText


def test_tool_calls_show_compactly_and_expand_to_their_result(qtbot: QtBot):
    transcript = Transcript()
    view = TranscriptView(transcript)
    qtbot.addWidget(view)
    view.show()
    transcript.apply(ToolCall(call_id="c1", server="sandbox", tool="run", arguments={"n": 1}))
    transcript.apply(ToolProgress(call_id="c1", progress=1, total=2))
    (widget,) = view.entry_widgets
    assert isinstance(widget, ToolCallWidget)
    assert "sandbox · run" in widget.plain_text()
    assert widget.progress_bar.isVisibleTo(widget) and widget.progress_bar.value() == 500
    assert not widget.details_view.isVisibleTo(widget)
    transcript.apply(ToolResult(call_id="c1", is_error=False, content="42"))
    assert widget.plain_text().endswith("done") and not widget.progress_bar.isVisibleTo(widget)
    widget.header_button.click()
    assert widget.details_view.isVisibleTo(widget)
    assert widget.details_view.toPlainText().endswith("result:\n42")


def test_reloading_the_transcript_rebuilds_the_view(qtbot: QtBot):
    transcript = Transcript()
    view = TranscriptView(transcript)
    qtbot.addWidget(view)
    transcript.apply(Token(text="old"))
    transcript.load("t1", (message("user", "a", "m1"), message("assistant", "b", "m2")))
    assert view.plain_text() == "a\nb"


def test_run_status_offers_cancel_while_running_and_retry_after_failure(qtbot: QtBot):
    status = RunStatusWidget()
    qtbot.addWidget(status)
    status.show()
    status.show_state(RunState("running", node="planner"), 0)
    assert status.status_label.text() == "Running: planner…"
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
