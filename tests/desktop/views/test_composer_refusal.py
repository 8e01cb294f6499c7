"""A message the sidecar does not take is never lost: whatever the refusal (`QUEUE_FULL` for a
queued message, a refused thread, no sidecar running), its text comes back into the composer
with the reason, without overwriting what the author typed since."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.controllers.composer import ComposerController
from desktop.controllers.session import SessionController
from desktop.ipc.api import SidecarApi
from desktop.ipc.client import RpcClient
from desktop.ipc.errors import ClientErrorCode
from desktop.ipc.process import SidecarProcess
from desktop.models.session import SessionState
from desktop.views.composer import ComposerWidget
from desktop.views.main_window import MainWindow
from sidecar.protocol import (
    ErrorCode,
    ErrorObject,
    PromptGetResult,
    QueueErrorCode,
    RunRef,
    RunStarted,
    RunStartParams,
    ThreadCreateParams,
    ThreadGetParams,
)
from tests.desktop.support import FakeSender, RunScript, thread_info
from tests.desktop.views.test_main_window import thread_result, window

__all__ = ["window"]

TIMEOUT_MS = 10_000


def _send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    qtbot.keyClicks(window.composer.editor, text)
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)


def _running(window: MainWindow, fake_sender: FakeSender) -> None:
    window.controller.send_message("Draft the opening")
    fake_sender.last("run/start")[1].resolve(RunRef(run_id="r1"))
    window.controller.handle_run_event(RunScript()(RunStarted()))


def _refuse(fake_sender: FakeSender, code: int, message: str = "refused") -> RunStartParams:
    params, pending = fake_sender.last("run/start")
    assert isinstance(params, RunStartParams)
    pending.reject(ErrorObject(code=code, message=message))
    return params


def test_a_queued_message_refused_as_queue_full_comes_back_into_the_composer(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    _running(window, fake_sender)
    _send(qtbot, window, "also the tide")
    assert window.composer.editor.toPlainText() == ""  # sent: the composer cleared
    params = _refuse(fake_sender, QueueErrorCode.QUEUE_FULL, "1000 messages are queued")
    assert params == RunStartParams(thread_id="t1", text="also the tide")
    assert window.composer.editor.toPlainText() == "also the tide"
    assert window.composer.refusal is not None
    assert window.composer.refusal.code == QueueErrorCode.QUEUE_FULL
    assert window.composer.error_label.isVisibleTo(window.composer)
    assert window.statusBar().currentMessage() != ""


def test_a_refused_start_comes_back_and_the_transcript_drops_the_unsent_message(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    _send(qtbot, window, "Draft the opening")
    assert window.transcript.plain_text().endswith("Draft the opening")
    sent = len(fake_sender.sent)
    _refuse(fake_sender, ErrorCode.THREAD_BUSY, "busy")
    assert window.composer.editor.toPlainText() == "Draft the opening"
    assert window.composer.refusal is not None
    assert window.composer.refusal.code == ErrorCode.THREAD_BUSY
    assert window.composer.send_button.text() == "Send"  # the thread is not shown as running
    reload = [(m, p) for m, p, _ in fake_sender.sent[sent:] if m == "thread/get"]
    assert len(reload) == 1
    assert isinstance(reload[0][1], ThreadGetParams) and reload[0][1].thread_id == "t1"
    fake_sender.last("thread/get")[1].resolve(thread_result("t1"))
    assert window.transcript.plain_text() == ""


def test_text_typed_since_is_kept_after_the_refused_message(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    _running(window, fake_sender)
    _send(qtbot, window, "also the tide")
    qtbot.keyClicks(window.composer.editor, "and the moon")
    _refuse(fake_sender, QueueErrorCode.QUEUE_FULL)
    editor = window.composer.editor
    assert editor.toPlainText() == "also the tide\n\nand the moon"
    assert editor.textCursor().position() == len(editor.toPlainText())  # still after "moon"
    qtbot.keyClicks(editor, "!")
    assert editor.toPlainText() == "also the tide\n\nand the moon!"
    editor.undo()  # the typing
    editor.undo()  # the message put back, as one edit
    assert editor.toPlainText() == "and the moon"


def test_a_message_already_back_in_the_draft_is_not_added_twice(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    _running(window, fake_sender)
    _send(qtbot, window, "also the tide")
    first = fake_sender.last("run/start")[1]
    _send(qtbot, window, "also the tide")  # sent again before the first reply
    _refuse(fake_sender, QueueErrorCode.QUEUE_FULL)
    first.reject(ErrorObject(code=QueueErrorCode.QUEUE_FULL, message="full"))
    assert window.composer.editor.toPlainText() == "also the tide"


def test_a_first_message_whose_thread_could_not_be_created_comes_back(
    qtbot: QtBot, fake_sender: FakeSender
):
    state = SessionState()
    window = MainWindow(state, SessionController(fake_sender.api, state))
    qtbot.addWidget(window)
    _send(qtbot, window, "Start the novel")
    params, pending = fake_sender.last("thread/create")
    assert isinstance(params, ThreadCreateParams) and params.title == "Start the novel"
    pending.reject(ErrorObject(code=ErrorCode.INTERNAL_ERROR, message="disk full"))
    assert window.composer.editor.toPlainText() == "Start the novel"
    assert window.composer.refusal is not None
    assert window.composer.refusal.code == ErrorCode.INTERNAL_ERROR


def test_a_message_refused_for_a_thread_no_longer_shown_still_comes_back(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    _running(window, fake_sender)
    _send(qtbot, window, "also the tide")
    window.thread_list.select_row(1)  # the author moved on to thread t2
    assert window.state.selected_thread_id == "t2"
    _refuse(fake_sender, QueueErrorCode.QUEUE_FULL)
    assert window.composer.editor.toPlainText() == "also the tide"
    assert window.composer.refusal is not None
    assert window.composer.refusal.code == QueueErrorCode.QUEUE_FULL


def test_with_no_sidecar_running_the_message_comes_back_at_once(qtbot: QtBot, tmp_path: Path):
    process = SidecarProcess(str(tmp_path / "missing"), [], policy=None, restart_delay_ms=0)
    client = RpcClient(process)
    with qtbot.waitSignal(process.gave_up, timeout=TIMEOUT_MS):
        process.start()
    state = SessionState()
    window = MainWindow(state, SessionController(SidecarApi(client), state))
    qtbot.addWidget(window)
    state.set_threads((thread_info("t1", "One"),))
    state.select("t1", loaded=True)
    _send(qtbot, window, "Draft the opening")
    assert window.composer.editor.toPlainText() == "Draft the opening"
    assert window.composer.refusal is not None
    assert window.composer.refusal.code == ClientErrorCode.NOT_CONNECTED
    assert window.composer.send_button.text() == "Send"


def test_a_refusal_while_a_prompt_expands_comes_back_after_the_expansion(
    qtbot: QtBot, fake_sender: FakeSender
):
    composer = ComposerWidget(features=ComposerController(fake_sender.api))
    qtbot.addWidget(composer)
    composer.expand("time", "convert", {"time": "09:00"})
    composer.take_back("also the tide", ErrorObject(code=QueueErrorCode.QUEUE_FULL, message="x"))
    assert composer.editor.toPlainText() == ""  # the draft is about to be replaced
    expanded = PromptGetResult(server="time", name="convert", messages=(), text="Convert 09:00.")
    fake_sender.last("prompt/get")[1].resolve(expanded)
    assert composer.editor.toPlainText() == "also the tide\n\nConvert 09:00."
    assert composer.refusal is not None and composer.refusal.code == QueueErrorCode.QUEUE_FULL
    assert composer.error_label.isVisibleTo(composer)
