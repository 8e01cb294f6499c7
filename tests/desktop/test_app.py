"""The whole desktop (`build_desktop`) against the scripted fake sidecar process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop, parse_args
from desktop.models.transcript import ToolCallEntry
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.question_dialog import QuestionDialog

pytestmark = pytest.mark.slow
TIMEOUT_MS = 10_000


@pytest.fixture
def desktop(qtbot: QtBot, fake_process_factory) -> Iterator[DesktopApp]:
    app = build_desktop(process=fake_process_factory())
    qtbot.addWidget(app.window)
    app.window.show()
    with qtbot.waitSignal(app.client.initialized, timeout=TIMEOUT_MS):
        app.start()
    yield app
    app.shutdown(timeout_ms=3000)


def send(qtbot: QtBot, app: DesktopApp, text: str) -> None:
    qtbot.waitUntil(app.window.composer.editor.isEnabled, timeout=TIMEOUT_MS)
    qtbot.keyClicks(app.window.composer.editor, text)
    qtbot.keyClick(app.window.composer.editor, Qt.Key.Key_Return)


def idle(app: DesktopApp) -> bool:
    return app.state.selected_thread_id is not None and app.state.run_state().status == "idle"


def test_a_message_creates_a_thread_and_streams_the_answer(qtbot: QtBot, desktop: DesktopApp):
    send(qtbot, desktop, "hello world")
    qtbot.waitUntil(lambda: "You said: hello world" in desktop.window.transcript.plain_text())
    qtbot.waitUntil(lambda: idle(desktop), timeout=TIMEOUT_MS)
    assert desktop.window.thread_list.model.rowCount() == 1
    assert desktop.state.threads.threads[0].title == "hello world"
    assert desktop.window.composer.editor.isEnabled()


def test_approving_a_write_in_the_dialog_runs_the_tool(qtbot: QtBot, desktop: DesktopApp):
    with qtbot.waitSignal(desktop.window.interrupt_dialog_opened, timeout=TIMEOUT_MS) as opened:
        send(qtbot, desktop, "approve")
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog)
    assert "+hello" in dialog.diff_view.toPlainText()
    qtbot.mouseClick(dialog.allow_once_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrote draft.md" in _tool_details(desktop), timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: "Done." in desktop.window.transcript.plain_text())
    assert len(desktop.state.inbox) == 0


def test_answering_a_question_resumes_with_the_choice(qtbot: QtBot, desktop: DesktopApp):
    with qtbot.waitSignal(desktop.window.interrupt_dialog_opened, timeout=TIMEOUT_MS) as opened:
        send(qtbot, desktop, "ask")
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, QuestionDialog)
    choice = dialog.choice_buttons[0]
    qtbot.mouseClick(choice, Qt.MouseButton.LeftButton, pos=QPoint(6, choice.height() // 2))
    qtbot.mouseClick(dialog.answer_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "You chose red" in desktop.window.transcript.plain_text())


def test_a_failed_turn_can_be_retried(qtbot: QtBot, desktop: DesktopApp):
    send(qtbot, desktop, "fail")
    retry = desktop.window.run_status.retry_button
    qtbot.waitUntil(retry.isVisible, timeout=TIMEOUT_MS)
    assert "it broke" in desktop.window.transcript.plain_text()
    qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "retried" in desktop.window.transcript.plain_text())


def test_after_a_crash_the_banner_shows_and_the_thread_comes_back(
    qtbot: QtBot, desktop: DesktopApp
):
    with qtbot.waitSignal(desktop.window.interrupt_dialog_opened, timeout=TIMEOUT_MS):
        send(qtbot, desktop, "approve")
    thread_id = desktop.state.selected_thread_id
    qtbot.waitUntil(lambda: idle(desktop) or desktop.state.run_state().status == "interrupted")
    with qtbot.waitSignal(desktop.process.restarted, timeout=TIMEOUT_MS):
        desktop.controller.send_message("crash")
    assert desktop.window.banner.state == "restarted"
    assert "crashing as asked" in desktop.window.banner.toolTip()
    qtbot.waitUntil(lambda: desktop.state.run_state().status == "interrupted", timeout=TIMEOUT_MS)
    assert desktop.state.selected_thread_id == thread_id
    assert "approve" in desktop.window.transcript.plain_text()
    assert desktop.state.inbox.count(thread_id or "") == 1
    assert len(desktop.window.dialogs) == 1


def test_shutdown_stops_the_sidecar_cleanly(qtbot: QtBot, desktop: DesktopApp):
    with qtbot.waitSignal(desktop.process.stopped, timeout=TIMEOUT_MS):
        desktop.shutdown()
    assert not desktop.process.is_running and not desktop.process.has_given_up


def test_the_composer_offers_the_sidecars_prompts_and_expands_one(
    qtbot: QtBot, desktop: DesktopApp
):
    qtbot.waitUntil(lambda: len(desktop.composer.prompts) == 3, timeout=TIMEOUT_MS)
    composer = desktop.window.composer
    qtbot.keyClicks(composer.editor, "/workspace:")
    assert composer.completer.listed_commands() == ["/workspace:outline", "/workspace:summarize"]
    qtbot.keyClick(composer.completer.popup(), Qt.Key.Key_Return)
    expanded = "Outline the workspace: its folders and what each holds."
    qtbot.waitUntil(lambda: composer.editor.toPlainText() == expanded, timeout=TIMEOUT_MS)
    assert desktop.state.selected_thread_id is None


def test_parse_args_reads_the_data_dir_and_leaves_qt_options(tmp_path):
    args = parse_args(["--data-dir", str(tmp_path), "-platform", "offscreen"])
    assert args.data_dir == tmp_path


def _tool_details(app: DesktopApp) -> str:
    return "\n".join(
        app.window.transcript.tool_details(entry.call_id)
        for entry in app.state.transcript.entries
        if isinstance(entry, ToolCallEntry)
    )
