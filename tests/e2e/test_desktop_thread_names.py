"""The window (offscreen) over the real sidecar with a scripted model: a thread made with New
thread is named after the author's first message when that turn ends, in the thread list and
over the run tree; a name the author gives later shows in both at once and is kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp
from sidecar.protocol import DEFAULT_THREAD_TITLE
from tests.e2e.desktop_rig import completed, window_over_sidecar
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

WAIT_MS = 60_000
FIRST = "Plan the **garden** for spring, with tulips and roses along the old fence"
NAMED = "Plan the garden for spring, with tulips and…"


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    with window_over_sidecar(qtbot, tmp_path, model, shown=False) as desktop:
        yield desktop


def _send(qtbot: QtBot, app: DesktopApp, text: str) -> None:
    editor = app.window.composer.editor
    editor.setPlainText(text)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=WAIT_MS, check_params_cb=completed
    ):
        qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_a_new_thread_is_named_after_its_first_message_and_a_rename_shows_everywhere(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer
):
    window, state = app.window, app.state
    window.new_thread_action.trigger()
    qtbot.waitUntil(lambda: state.selected_thread_id is not None, timeout=WAIT_MS)
    thread_id = state.selected_thread_id
    assert thread_id is not None

    def titles() -> tuple[str | None, str | None, str]:
        thread = state.threads.get(thread_id)
        index = window.thread_list.model.index_of(thread_id)
        assert window.run_tree is not None
        return (
            thread.title if thread is not None else None,
            index.data() if index is not None else None,
            window.run_tree.title_label.text(),
        )

    assert titles() == (DEFAULT_THREAD_TITLE, DEFAULT_THREAD_TITLE, DEFAULT_THREAD_TITLE)

    model.push(Reply.text(answer_text("Tulips by the fence, roses behind.")))
    _send(qtbot, app, FIRST)
    qtbot.waitUntil(lambda: titles() == (NAMED, NAMED, NAMED), timeout=WAIT_MS)

    window.controller.rename_thread(thread_id, "Garden")
    qtbot.waitUntil(lambda: titles() == ("Garden", "Garden", "Garden"), timeout=WAIT_MS)

    model.push(Reply.text(answer_text("Box, clipped low.")))
    _send(qtbot, app, "And the hedge?")
    listed = window.controller.refresh()
    qtbot.waitUntil(lambda: listed.done, timeout=WAIT_MS)
    assert titles() == ("Garden", "Garden", "Garden")
