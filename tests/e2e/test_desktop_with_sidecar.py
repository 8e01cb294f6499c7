"""The window driving the real sidecar subprocess, with a scripted model: send a message, approve
the write in the dialog, watch the answer stream, then kill the sidecar and see the thread
come back."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp, build_desktop
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.main_window import MainWindow
from desktop.views.thread_list_model import THREAD_ID_ROLE
from sidecar.protocol import RunEventParams, ThreadListResult
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

ANSWER = "Chapter one is written and waiting for you."


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATRIUM_", "OPENAI_"))}
    env.update(
        ATRIUM_WORKSPACE=str(workspace),
        ATRIUM_MODEL="openai/gpt-4o-mini",
        ATRIUM_MODEL_API_BASE=model.url + "/v1",
        ATRIUM_MODEL_API_KEY="sk-scripted",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    desktop = build_desktop(tmp_path / "data", env)
    qtbot.addWidget(desktop.window)
    with qtbot.waitSignal(desktop.client.initialized, timeout=30_000):
        desktop.start()
    yield desktop
    desktop.shutdown()


def _completed(params: RunEventParams) -> bool:
    event = params.event
    return event.type == "run_finished" and event.outcome == "completed"


def test_an_author_approves_a_write_sees_the_answer_stream_and_gets_it_back_after_a_crash(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer, tmp_path: Path
):
    model.push(
        Reply.tool_call("workspace__write", {"path": "chapter1.md", "content": "It began.\n"}),
        # Pauses well past the sidecar's coalescing window: the answer arrives in pieces.
        Reply.text(answer_text(ANSWER), chunk_size=16, chunk_delay=0.4),
    )
    window = app.window
    tokens: list[str] = []

    def collect(params: RunEventParams) -> None:
        if params.event.type == "token":
            tokens.append(params.event.text)

    app.client.run_event_received.connect(collect)
    window.composer.editor.setPlainText("Write the first chapter")
    with qtbot.waitSignal(window.interrupt_dialog_opened, timeout=60_000) as opened:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog)
    assert "+It began." in dialog.diff_view.toPlainText()

    with qtbot.waitSignal(
        app.client.run_event_received, timeout=60_000, check_params_cb=_completed
    ):
        qtbot.mouseClick(dialog.allow_once_button, Qt.MouseButton.LeftButton)
    assert (tmp_path / "workspace" / "chapter1.md").read_text() == "It began.\n"
    assert len(tokens) > 1 and "".join(tokens).strip() == ANSWER
    qtbot.waitUntil(lambda: ANSWER in window.transcript.plain_text(), timeout=10_000)
    assert _line_after(window, "Write the first chapter").startswith("◇ Context: ")

    with qtbot.waitSignal(app.client.initialized, timeout=60_000):
        os.kill(app.process.process_id(), signal.SIGKILL)
    qtbot.waitUntil(lambda: window.thread_list.model.rowCount() == 1, timeout=10_000)
    window.thread_list.select_row(0)
    qtbot.waitUntil(lambda: ANSWER in window.transcript.plain_text(), timeout=10_000)
    assert "Write the first chapter" in window.transcript.plain_text()
    # What the agent saw comes back from the stored report, once, under the author's message.
    qtbot.waitUntil(lambda: "◇ Context: " in window.transcript.plain_text(), timeout=10_000)
    assert window.transcript.plain_text().count("◇ Context: ") == 1
    assert _line_after(window, "Write the first chapter").startswith("◇ Context: ")


def _line_after(window: MainWindow, line: str) -> str:
    lines = window.transcript.plain_text().splitlines()
    return lines[lines.index(line) + 1]


def _move_menu_action(window: MainWindow, thread_id: str, text: str) -> QAction:
    thread_list = window.thread_list
    thread_list.select_thread(thread_id)
    index = thread_list.model.index_of(thread_id)
    assert index is not None
    thread_list.view.customContextMenuRequested.emit(thread_list.view.visualRect(index).center())
    menu = thread_list.context_menu
    assert menu is not None
    move = menu.actions()[0].menu()
    assert isinstance(move, QMenu)
    return next(a for a in move.actions() if a.text() == text)


def test_threads_moved_into_a_channel_come_back_from_the_sidecar_as_a_folder(
    qtbot: QtBot, app: DesktopApp
):
    window = app.window
    model = window.thread_list.model
    for title in ("Chapter 1", "Chapter 2", "Loose notes"):
        window.controller.create_thread(title)
        qtbot.waitUntil(lambda t=title: any(x.title == t for x in window.state.threads.threads))
    ids = {t.title: t.id for t in window.state.threads.threads}

    _move_menu_action(window, ids["Chapter 1"], "New channel…").trigger()
    dialog = window.thread_list.channel_dialog
    assert dialog is not None
    dialog.setTextValue("Writing")
    dialog.accept()
    qtbot.waitUntil(lambda: model.channels() == ["Writing"], timeout=10_000)
    _move_menu_action(window, ids["Chapter 2"], "Writing").trigger()
    qtbot.waitUntil(
        lambda: model.rowCount(model.folder_index("Writing") or QModelIndex()) == 2,
        timeout=10_000,
    )

    listed: list[ThreadListResult] = []
    app.client.request("thread/list").then(listed.append)
    qtbot.waitUntil(lambda: bool(listed), timeout=10_000)
    assert {t.title: t.channel for t in listed[0].threads} == {
        "Chapter 1": "Writing",
        "Chapter 2": "Writing",
        "Loose notes": None,
    }
    refreshed = window.controller.refresh()
    qtbot.waitUntil(lambda: refreshed.done, timeout=10_000)
    assert model.channels() == ["Writing"]
    assert model.rowCount() == 2  # the folder, then the loose thread
    assert window.thread_list.view.currentIndex().data(THREAD_ID_ROLE) == ids["Chapter 2"]

    for title in ("Chapter 1", "Chapter 2"):
        _move_menu_action(window, ids[title], "No channel").trigger()
    qtbot.waitUntil(lambda: model.channels() == [], timeout=10_000)
    assert model.rowCount() == 3
