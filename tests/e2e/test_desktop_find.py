"""The window (offscreen) over the real sidecar with a scripted model: the view follows the
author. A message sent after scrolling up, or after Find went up the thread, comes into view
with its answer; Find counts the matches (not the messages), marks every one of them, the
current one apart, and scrolls each into view as Enter steps through them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.app import DesktopApp
from desktop.models.transcript import MessageEntry
from desktop.views.main_window import MainWindow
from tests.e2e.desktop_rig import completed, window_over_sidecar
from tests.fakes.dspy_format import answer_text
from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.fakes.openai_chat import openai_chat_server

WAIT_MS = 60_000
LONG_ANSWER = "\n\n".join(
    f"Stretch {n}: the river passes mill {n} and the River bends east." for n in range(60)
)


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with openai_chat_server() as server:
        yield server


@pytest.fixture
def app(qtbot: QtBot, tmp_path: Path, model: ScriptedModelServer) -> Iterator[DesktopApp]:
    with window_over_sidecar(qtbot, tmp_path, model) as desktop:
        yield desktop


def _send(qtbot: QtBot, app: DesktopApp, text: str) -> None:
    editor = app.window.composer.editor
    editor.setPlainText(text)
    with qtbot.waitSignal(
        app.client.run_event_received, timeout=WAIT_MS, check_params_cb=completed
    ):
        qtbot.keyClick(editor, Qt.Key.Key_Return)


def _row_of(window: MainWindow, role: str, text: str) -> int:
    for row, entry in enumerate(window.state.transcript.entries):
        if isinstance(entry, MessageEntry) and entry.role == role and entry.text == text:
            return row
    raise AssertionError(f"no {role} message {text!r}")


def _shows_the_end_with(qtbot: QtBot, window: MainWindow, question: str, answer: str) -> None:
    view = window.transcript
    bar = view.list_view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=WAIT_MS)
    assert view.is_pinned
    assert view.row_is_visible(_row_of(window, "user", question))
    assert view.row_is_visible(_row_of(window, "assistant", answer))


def _current_is_in_view(window: MainWindow) -> bool:
    rect = window.transcript.current_match_rect()
    return rect is not None and window.transcript.list_view.viewport().rect().contains(rect)


def test_the_view_follows_the_author_after_scrolling_up_and_after_find(
    qtbot: QtBot, app: DesktopApp, model: ScriptedModelServer
) -> None:
    window = app.window
    view = window.transcript
    bar = view.list_view.verticalScrollBar()
    model.push(Reply.text(answer_text(LONG_ANSWER)))
    _send(qtbot, app, "Tell me about the river")
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=WAIT_MS)

    bar.setValue(0)  # the author scrolls up to read
    assert not view.is_pinned
    model.push(Reply.text(answer_text("The sea is wide.")))
    _send(qtbot, app, "And the sea?")
    _shows_the_end_with(qtbot, window, "And the sea?", "The sea is wide.")

    window.menu_actions.find.trigger()
    qtbot.keyClicks(view.find_bar.query_edit, "river")
    qtbot.keyClick(view.find_bar.query_edit, Qt.Key.Key_Return)
    status = view.find_bar.status_label
    qtbot.waitUntil(lambda: status.text() == "1 of 121", timeout=WAIT_MS)  # 120 + the question
    answer_row = _row_of(window, "assistant", LONG_ANSWER)
    marked = view.marked_matches(answer_row)
    assert len(marked) == 120
    assert {text.casefold() for text, _ in marked} == {"river"}
    assert [n for n, (_, current) in enumerate(marked) if current] == [119]  # the lowest first
    qtbot.waitUntil(lambda: _current_is_in_view(window), timeout=WAIT_MS)

    for step in range(2, 5):
        qtbot.keyClick(view.find_bar.query_edit, Qt.Key.Key_Return)
        assert status.text() == f"{step} of 121"
        marked = view.marked_matches(answer_row)
        assert [n for n, (_, current) in enumerate(marked) if current] == [120 - step]
        qtbot.waitUntil(lambda: _current_is_in_view(window), timeout=WAIT_MS)

    qtbot.keyClick(view.find_bar.query_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert status.text() == "3 of 121"
    for _ in range(3):  # back past the first match: round to the last, in the question
        qtbot.keyClick(
            view.find_bar.query_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier
        )
    assert status.text() == "121 of 121"
    # The question's row knows its id once its page is read back: then it is found and shown.
    qtbot.waitUntil(lambda: _current_is_in_view(window), timeout=WAIT_MS)
    question_row = _row_of(window, "user", "Tell me about the river")
    assert view.marked_matches(question_row) == [("river", True)]
    assert not view.is_pinned

    model.push(Reply.text(answer_text("The lake is still.")))
    window.composer.editor.setFocus()
    _send(qtbot, app, "And the lake?")
    _shows_the_end_with(qtbot, window, "And the lake?", "The lake is still.")
