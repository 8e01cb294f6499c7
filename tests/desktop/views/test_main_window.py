"""`MainWindow` with a `SessionController` over a recording sender: view → request, reply → view."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from desktop.controllers.session import SessionController, title_from_text
from desktop.models.session import SessionState
from desktop.models.transcript import INITIAL_PAGE
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.main_window import MainWindow
from desktop.views.settings_dialog import SettingsDialog
from sidecar.protocol import (
    ApprovalInterrupt,
    ErrorCode,
    ErrorInfo,
    ErrorObject,
    InterruptEvent,
    RunFailed,
    RunFinished,
    RunRef,
    RunResumeParams,
    RunStarted,
    RunStartParams,
    SettingsInfo,
    SettingsSetParams,
    ThreadGetParams,
    ThreadGetResult,
    ThreadListResult,
    ThreadRef,
    ThreadRenameParams,
    Token,
)
from tests.desktop.support import FakeSender, RunScript, message, thread_info


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """A window with threads t1 and t2 listed and t1 loaded."""
    return build_window(qtbot, fake_sender)


def build_window(qtbot: QtBot, fake_sender: FakeSender, **panels: Any) -> MainWindow:
    """The `window` fixture's window, with the panels of the controllers in `panels` (the
    `MainWindow` keywords, e.g. `queue=QueueController(...)`)."""
    state = SessionState()
    controller = SessionController(fake_sender.api, state)
    window = MainWindow(state, controller, **panels)
    qtbot.addWidget(window)
    window.show()
    controller.refresh()
    _, listing = fake_sender.last("thread/list")
    listing.resolve(ThreadListResult(threads=(thread_info("t1", "One"), thread_info("t2", "Two"))))
    params, got = fake_sender.last("thread/get")
    assert params == ThreadGetParams(thread_id="t1", limit=INITIAL_PAGE)
    got.resolve(thread_result("t1", messages=(message("user", "earlier", "m0"),)))
    return window


def thread_result(thread_id: str, **fields: object) -> ThreadGetResult:
    base = {"thread": thread_info(thread_id), "messages": (), "interrupts": (), "status": "idle"}
    return ThreadGetResult.model_validate(base | fields)


def approval() -> ApprovalInterrupt:
    return ApprovalInterrupt(
        id="i1", title="Write", body="", server="workspace", tool="write",
        arguments={"path": "a.md"}, call_id="c1", diff="+a",
    )  # fmt: skip


def test_refresh_lists_threads_and_loads_the_first(window: MainWindow):
    assert window.thread_list.model.rowCount() == 2
    assert window.thread_list.view.currentIndex().row() == 0
    assert window.transcript.plain_text() == "earlier"
    assert window.run_status.status_label.text() == "Ready"


def test_typing_and_enter_starts_a_run_and_the_composer_turns_to_queueing(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    qtbot.keyClicks(window.composer.editor, "Draft the opening")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    params, pending = fake_sender.last("run/start")
    assert params == RunStartParams(thread_id="t1", text="Draft the opening")
    assert window.transcript.plain_text().endswith("Draft the opening")
    assert window.composer.send_button.text() == "Queue"
    assert window.run_status.cancel_button.isVisible()
    pending.resolve(RunRef(run_id="r1"))
    run = RunScript()
    window.controller.handle_run_event(run(RunStarted()))
    window.controller.handle_run_event(run(Token(text="Once upon")))
    assert window.transcript.plain_text().splitlines()[-1].startswith("Once upon")
    window.controller.handle_run_event(run(RunFinished()))
    assert window.composer.send_button.text() == "Send"


def test_a_refused_start_re_enables_the_composer_and_reports(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.controller.send_message("hello")
    _, pending = fake_sender.last("run/start")
    pending.reject(ErrorObject(code=ErrorCode.THREAD_BUSY, message="busy"))
    assert window.composer.editor.isEnabled()
    assert "busy" in window.statusBar().currentMessage()


def test_cancel_and_retry_buttons_send_their_requests(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    run = RunScript()
    window.controller.handle_run_event(run(RunStarted()))
    qtbot.mouseClick(window.run_status.cancel_button, Qt.MouseButton.LeftButton)
    assert fake_sender.last("run/cancel")[0] == ThreadRef(thread_id="t1")
    window.controller.handle_run_event(run(RunFailed(error=ErrorInfo(code="x", message="down"))))
    assert window.run_status.status_label.text() == "Failed: down"
    qtbot.mouseClick(window.run_status.retry_button, Qt.MouseButton.LeftButton)
    assert fake_sender.last("run/retry")[0] == ThreadRef(thread_id="t1")


def test_an_interrupt_opens_the_dialog_and_allow_for_thread_resumes(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    run = RunScript()
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        window.controller.handle_run_event(run(InterruptEvent(interrupt=approval())))
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog) and dialog.isVisible()
    window.controller.handle_run_event(run(RunFinished(outcome="interrupted")))
    assert window.inbox_button.text() == "Waiting: 1"
    qtbot.mouseClick(dialog.allow_thread_button, Qt.MouseButton.LeftButton)
    params, pending = fake_sender.last("run/resume")
    assert params == RunResumeParams(
        thread_id="t1", interrupt_id="i1", value={"decision": "allow_thread"}
    )
    pending.resolve(RunRef(run_id="r2"))
    assert len(window.state.inbox) == 0 and window.dialogs == {}


def test_the_inbox_reopens_a_closed_dialog(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        window.controller.handle_run_event(RunScript()(InterruptEvent(interrupt=approval())))
    window.dialogs["i1"].close()
    assert window.dialogs == {}
    (action,) = window.inbox_button.menu().actions()
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        action.trigger()
    assert "i1" in window.dialogs


def test_interrupts_of_other_threads_wait_in_the_inbox_until_selected(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.controller.handle_run_event(
        RunScript(thread_id="t2")(InterruptEvent(interrupt=approval()))
    )
    assert window.dialogs == {} and window.inbox_button.text() == "Waiting: 1"
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        window.thread_list.select_row(1)
    assert fake_sender.last("thread/get")[0] == ThreadGetParams(thread_id="t2", limit=INITIAL_PAGE)


def test_selecting_a_thread_loads_its_transcript(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.thread_list.select_row(1)
    assert window.transcript.plain_text() == ""
    _, pending = fake_sender.last("thread/get")
    pending.resolve(thread_result("t2", messages=(message("user", "second", "x", "t2"),)))
    assert window.transcript.plain_text() == "second"


def test_delete_asks_first_then_removes_the_thread(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    qtbot.mouseClick(window.thread_list.delete_button, Qt.MouseButton.LeftButton)
    box = window.thread_list.confirm_box
    assert box is not None and box.isVisible()
    box.button(QMessageBox.StandardButton.Yes).click()
    params, pending = fake_sender.last("thread/delete")
    assert params == ThreadRef(thread_id="t1")
    pending.resolve(params.__class__.model_validate({"thread_id": "t1"}))
    assert [t.id for t in window.state.threads.threads] == ["t2"]
    assert window.state.selected_thread_id == "t2"


def test_cancelling_the_delete_confirm_sends_nothing(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    qtbot.mouseClick(window.thread_list.delete_button, Qt.MouseButton.LeftButton)
    box = window.thread_list.confirm_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert "thread/delete" not in fake_sender.methods()


def test_renaming_in_place_sends_rename_and_shows_the_reply(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    model = window.thread_list.model
    model.setData(model.index(0, 0), "Prologue", Qt.ItemDataRole.EditRole)
    params, pending = fake_sender.last("thread/rename")
    assert params == ThreadRenameParams(thread_id="t1", title="Prologue")
    pending.resolve(thread_info("t1", "Prologue"))
    assert model.index(0, 0).data(Qt.ItemDataRole.EditRole) == "Prologue"


def test_new_thread_creates_and_selects_it(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    qtbot.mouseClick(window.thread_list.new_button, Qt.MouseButton.LeftButton)
    _, pending = fake_sender.last("thread/create")
    pending.resolve(thread_info("t3", "New thread"))
    assert window.state.selected_thread_id == "t3"
    assert window.thread_list.view.currentIndex().row() == 0


def test_the_first_message_without_a_thread_creates_one_titled_after_it(
    fake_sender: FakeSender,
):
    controller = SessionController(fake_sender.api, SessionState())
    controller.send_message("Plan chapter two\nwith details")
    params, pending = fake_sender.last("thread/create")
    assert params.model_dump() == {"title": "Plan chapter two"}
    pending.resolve(thread_info("t9", "Plan chapter two"))
    assert fake_sender.last("run/start")[0] == RunStartParams(
        thread_id="t9", text="Plan chapter two\nwith details"
    )
    assert len(title_from_text("x" * 100)) == 48


def test_settings_open_from_the_action_and_save_sends_settings_set(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.settings_action.trigger()
    _, pending = fake_sender.last("settings/get")
    info = SettingsInfo(
        model=None, api_base=None, workspace="/w", has_api_key=False, model_source="none"
    )
    with qtbot.waitSignal(window.settings_dialog_opened) as opened:
        pending.resolve(info)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, SettingsDialog)
    dialog.model_edit.setText("ollama/llama3")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert fake_sender.last("settings/set")[0] == SettingsSetParams(model="ollama/llama3")
