"""The keyboard in the real window, as in other desktop apps: Tab and Shift+Tab move the focus
out of the composer and back (a tab is never typed), Ctrl+Tab and Ctrl+Shift+Tab go to the next
and previous thread, and Ctrl+Home and Ctrl+End scroll the conversation from the composer too."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.main_window import MainWindow
from sidecar.protocol import ThreadGetParams, ThreadGetResult, ThreadListResult
from tests.desktop.support import FakeSender, message, thread_info

_Key = Qt.Key
_CTRL = Qt.KeyboardModifier.ControlModifier
_SHIFT = Qt.KeyboardModifier.ShiftModifier
LONG = " ".join(["a line of the conversation that wraps"] * 8)


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """Threads t1, t2 and t3 listed; t1 loaded with 60 long messages; the composer focused."""
    state = SessionState()
    window = MainWindow(state, SessionController(fake_sender.api, state))
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    window.controller.refresh()
    threads = tuple(thread_info(f"t{n}", f"Thread {n}") for n in (1, 2, 3))
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=threads))
    messages = tuple(message("user", f"{n}: {LONG}", f"m{n}") for n in range(60))
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult(thread=threads[0], messages=messages, interrupts=(), status="idle")
    )
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    window.composer.editor.setFocus()
    qtbot.waitUntil(window.composer.editor.hasFocus, timeout=5000)
    return window


def test_tab_moves_the_focus_out_of_the_composer_and_shift_tab_back(
    qtbot: QtBot, window: MainWindow
):
    editor = window.composer.editor
    qtbot.keyClicks(editor, "draft")
    qtbot.keyClick(editor, _Key.Key_Tab)
    assert editor.toPlainText() == "draft"
    assert not editor.hasFocus()
    focused = QApplication.focusWidget()
    assert focused is not None and window.composer.isAncestorOf(focused)  # its buttons
    qtbot.keyClick(focused, _Key.Key_Backtab, _SHIFT)
    assert editor.hasFocus() and editor.toPlainText() == "draft"


def test_tab_still_picks_the_command_the_popup_offers(qtbot: QtBot, window: MainWindow):
    editor = window.composer.editor
    qtbot.keyClicks(editor, "/too")
    popup = window.composer.completer.popup()
    qtbot.waitUntil(lambda: window.composer.completer.is_showing, timeout=5000)
    qtbot.keyClick(popup, _Key.Key_Tab)
    assert editor.toPlainText() == "/tools "
    assert editor.hasFocus()


def test_ctrl_tab_goes_to_the_next_thread_and_ctrl_shift_tab_back(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    editor = window.composer.editor
    qtbot.keyClicks(editor, "draft")
    qtbot.keyClick(editor, _Key.Key_Tab, _CTRL)
    assert window.state.selected_thread_id == "t2"
    assert fake_sender.last("thread/get")[0] == ThreadGetParams(thread_id="t2", limit=200)
    assert editor.toPlainText() == "draft"
    window.composer.editor.setFocus()
    qtbot.keyClick(window.composer.editor, _Key.Key_Backtab, _CTRL | _SHIFT)
    qtbot.keyClick(window.composer.editor, _Key.Key_Backtab, _CTRL | _SHIFT)
    assert window.state.selected_thread_id == "t3"  # round from the first to the last
    assert window.composer.editor.toPlainText() == "draft"


def test_ctrl_home_and_end_in_the_composer_scroll_the_conversation_not_the_draft(
    qtbot: QtBot, window: MainWindow
):
    editor = window.composer.editor
    bar = window.transcript.list_view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)
    qtbot.keyClicks(editor, "first line")
    editor.insertPlainText("\nsecond line")
    cursor_at = editor.textCursor().position()
    qtbot.keyClick(editor, _Key.Key_Home, _CTRL)
    qtbot.waitUntil(lambda: bar.value() == 0, timeout=5000)
    assert not window.transcript.is_pinned
    assert (editor.textCursor().position(), editor.hasFocus()) == (cursor_at, True)
    qtbot.keyClick(editor, _Key.Key_End, _CTRL)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=5000)
    assert window.transcript.is_pinned
    assert editor.toPlainText() == "first line\nsecond line"
