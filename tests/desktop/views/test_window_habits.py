"""The habits of a desktop app, through the real window: menu bar and standard shortcuts, Esc,
light/dark following the system, restored layout, errors that never widen the window, a
message typed during a dialog, notifications, About and the empty window's first steps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import PySide6
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from desktop.controllers.plans import CoordController
from desktop.controllers.session import SessionController
from desktop.models.session import SessionState
from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.main_window import MainWindow
from desktop.views.settings_dialog import SettingsDialog
from desktop.views.theme import SETTINGS_KEY
from desktop.views.window_state import app_settings
from sidecar.protocol import (
    PROTOCOL_VERSION,
    ApprovalInterrupt,
    ErrorInfo,
    InitializeResult,
    InterruptEvent,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStartParams,
    SettingsInfo,
    ThreadGetResult,
    ThreadListResult,
    ThreadRef,
)
from tests.desktop.support import FakeSender, RunScript, message, thread_info

_Key = Qt.Key
_CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture(autouse=True)
def _app_palette_restored(qapp: QApplication) -> Iterator[None]:
    """The theme sets the application's palette; later tests get theirs back."""
    before = QPalette(qapp.palette())
    yield
    QApplication.setPalette(before)


def _build(qtbot: QtBot, sender: FakeSender) -> MainWindow:
    state = SessionState()
    window = MainWindow(state, SessionController(sender.api, state))
    qtbot.addWidget(window)
    window.show()
    return window


@pytest.fixture
def window(qtbot: QtBot, fake_sender: FakeSender) -> MainWindow:
    """Threads t1 and t2 listed, t1 loaded with one message, the window active."""
    window = _build(qtbot, fake_sender)
    window.controller.refresh()
    fake_sender.last("thread/list")[1].resolve(
        ThreadListResult(threads=(thread_info("t1", "One"), thread_info("t2", "Two")))
    )
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult.model_validate(
            {
                "thread": thread_info("t1", "One"),
                "messages": (message("user", "earlier", "m0"),),
                "interrupts": (),
                "status": "idle",
            }
        )
    )
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    return window


def _approval() -> ApprovalInterrupt:
    return ApprovalInterrupt(
        id="i1", title="Write a.md", body="", server="workspace", tool="write",
        arguments={"path": "a.md"}, call_id="c1",
    )  # fmt: skip


def _keys(action: QAction) -> set[str]:
    return {key.toString(QKeySequence.SequenceFormat.PortableText) for key in action.shortcuts()}


def _all_shortcuts(window: MainWindow) -> list[str]:
    return [
        key.toString(QKeySequence.SequenceFormat.PortableText)
        for action in window.findChildren(QAction)
        for key in action.shortcuts()
    ]


# --- menu bar and shortcuts -------------------------------------------------------------------


def test_the_menu_bar_has_file_edit_view_help_with_the_standard_shortcuts(window: MainWindow):
    titles = [action.text().replace("&", "") for action in window.menuBar().actions()]
    assert titles == ["File", "Edit", "View", "Help"]
    actions = window.menu_actions
    assert "Ctrl+N" in _keys(actions.new_thread)
    assert "Ctrl+," in _keys(actions.settings)
    assert "Ctrl+F" in _keys(actions.find)
    assert "Ctrl+Q" in _keys(actions.quit)
    assert _keys(actions.stop_run) == {"Esc"}
    shortcuts = _all_shortcuts(window)
    duplicated = {key for key in shortcuts if shortcuts.count(key) > 1}
    assert duplicated == set()  # one action per key: no ambiguous shortcut anywhere


def test_a_new_panel_goes_into_the_file_menu_before_quit(window: MainWindow):
    action = QAction("Memory", window)
    window.menu_actions.add_panel(action)
    file_menu = window.menu_actions.file_menu
    assert file_menu is not None
    texts = [a.text().replace("&", "") for a in file_menu.actions() if not a.isSeparator()]
    assert texts[-3:] == ["Grants…", "Memory", "Quit"]


def test_ctrl_n_starts_a_new_thread(qtbot: QtBot, window: MainWindow, fake_sender: FakeSender):
    qtbot.keyClick(window.composer.editor, _Key.Key_N, _CTRL)
    assert "thread/create" in fake_sender.methods()


def test_ctrl_comma_opens_the_settings(qtbot: QtBot, window: MainWindow, fake_sender: FakeSender):
    qtbot.keyClick(window.composer.editor, _Key.Key_Comma, _CTRL)
    assert "settings/get" in fake_sender.methods()


def test_ctrl_f_asks_for_the_find_bar(qtbot: QtBot, window: MainWindow):
    with qtbot.waitSignal(window.find_requested, timeout=2000):
        qtbot.keyClick(window.composer.editor, _Key.Key_F, _CTRL)


def test_ctrl_q_closes_the_window_and_asks_the_app_to_quit(qtbot: QtBot, window: MainWindow):
    with qtbot.waitSignal(window.quit_requested, timeout=2000):
        qtbot.keyClick(window.composer.editor, _Key.Key_Q, _CTRL)
    assert not window.isVisible()


def test_esc_stops_the_running_run_and_does_nothing_when_idle(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    qtbot.keyClick(window.composer.editor, _Key.Key_Escape)
    assert "run/cancel" not in fake_sender.methods()
    window.controller.handle_run_event(RunScript()(RunStarted()))
    assert window.menu_actions.stop_run.isEnabled()
    qtbot.keyClick(window.thread_list.view, _Key.Key_Escape)
    assert fake_sender.last("run/cancel")[0] == ThreadRef(thread_id="t1")


def test_esc_closes_a_dialog_and_the_question_waits_in_the_inbox(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        window.controller.handle_run_event(RunScript()(InterruptEvent(interrupt=_approval())))
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog)
    qtbot.keyClick(dialog, _Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=2000)
    assert "run/cancel" not in fake_sender.methods() and "run/resume" not in fake_sender.methods()
    assert window.state.inbox.count("t1") == 1


# --- light and dark ---------------------------------------------------------------------------


def _window_lightness(window: MainWindow) -> int:
    return window.palette().color(QPalette.ColorRole.Window).lightness()


def test_the_window_follows_the_system_switching_to_dark_and_back(qtbot: QtBot, window: MainWindow):
    hints = QGuiApplication.styleHints()
    assert window.theme.appearance == "system"
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert window.theme.scheme == "dark"
    qtbot.waitUntil(lambda: _window_lightness(window) < 80, timeout=2000)
    assert window.composer.editor.palette().color(QPalette.ColorRole.Text).lightness() > 180
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert window.theme.scheme == "light"
    qtbot.waitUntil(lambda: _window_lightness(window) > 180, timeout=2000)


def test_a_chosen_appearance_is_kept_and_wins_over_the_system(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.menu_actions.appearance["dark"].trigger()
    qtbot.waitUntil(lambda: _window_lightness(window) < 80, timeout=2000)
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert window.theme.scheme == "dark"
    assert app_settings().value(SETTINGS_KEY) == "dark"
    window.close()
    again = _build(qtbot, FakeSender())
    assert again.theme.appearance == "dark" and again.menu_actions.appearance["dark"].isChecked()


# --- layout restored --------------------------------------------------------------------------


def test_size_position_and_splitter_come_back_in_the_next_window(qtbot: QtBot, window: MainWindow):
    window.resize(780, 560)
    qtbot.waitUntil(lambda: window.width() == 780, timeout=2000)
    default = window.splitter.sizes()
    window.splitter.setSizes([default[0] + default[1], 0])  # threads only
    QApplication.processEvents()
    sizes = window.splitter.sizes()
    assert sizes != default
    window.close()
    again = _build(qtbot, FakeSender())
    assert (again.width(), again.height()) == (780, 560)
    assert again.splitter.sizes() == sizes


def test_an_unreadable_saved_layout_leaves_the_defaults(qtbot: QtBot):
    settings = app_settings()
    settings.setValue("window/geometry", b"garbage")
    settings.setValue("window/splitter", b"\x00\x01")
    settings.sync()
    window = _build(qtbot, FakeSender())
    assert window.width() > 0 and len(window.splitter.sizes()) == 2


# --- errors -----------------------------------------------------------------------------------


def test_a_5000_character_error_wraps_and_never_widens_the_window(qtbot: QtBot, window: MainWindow):
    width = window.width()
    raw = "x" * 5000
    error = ErrorInfo(
        code="auth",
        message="The model provider rejected the API key: check the key in Settings → Model",
        details=raw,
    )
    run = RunScript()
    window.controller.handle_run_event(run(RunStarted()))
    window.controller.handle_run_event(run(RunFailed(error=error)))
    window.controller.error_reported.emit("Loading failed: " + "y" * 5000)
    window.banner.show_message("The sidecar refused to start: " + "z" * 5000)
    window.composer.show_error("The server refused: " + "w" * 5000)
    QApplication.processEvents()
    assert window.width() == width
    status = window.run_status
    assert status.status_label.text() == f"Failed: {error.message}"
    assert status.details_button.isVisible() and not status.details_view.isVisible()
    qtbot.mouseClick(status.details_button, Qt.MouseButton.LeftButton)
    assert status.details_view.isVisible() and raw in status.details_view.toPlainText()
    QApplication.processEvents()
    assert window.width() == width


def test_one_long_word_of_error_is_cut_to_one_line_with_the_rest_behind_details(
    window: MainWindow,
):
    run = RunScript()
    window.controller.handle_run_event(run(RunStarted()))
    window.controller.handle_run_event(
        run(RunFailed(error=ErrorInfo(code="x", message="e" * 5000)))
    )
    status = window.run_status
    assert len(status.status_label.text()) <= 170 and status.status_label.text().endswith("…")
    assert status.details_view.toPlainText() == "e" * 5000


# --- a message typed while a dialog is open ---------------------------------------------------


def test_a_message_sent_during_an_approval_is_queued_at_once_and_leaves_the_composer(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    run = RunScript()
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        window.controller.handle_run_event(run(InterruptEvent(interrupt=_approval())))
    window.controller.handle_run_event(run(RunFinished(outcome="interrupted")))
    dialog = (opened.args or [])[0]
    assert isinstance(dialog, ApprovalDialog) and dialog.isVisible()
    qtbot.keyClicks(window.composer.editor, "And then the storm")
    qtbot.keyClick(window.composer.editor, _Key.Key_Return)
    # Queued by the sidecar behind the question (the thread's default mode), not held here.
    assert fake_sender.last("run/start")[0] == RunStartParams(
        thread_id="t1", text="And then the storm", mode=None
    )
    assert window.composer.editor.toPlainText() == ""
    assert not window.transcript.plain_text().endswith("And then the storm")
    assert dialog.isVisible()  # the question is still the author's to answer


def test_alt_enter_during_an_approval_sends_an_interrupt(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    run = RunScript()
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        window.controller.handle_run_event(run(InterruptEvent(interrupt=_approval())))
    window.controller.handle_run_event(run(RunFinished(outcome="interrupted")))
    qtbot.keyClicks(window.composer.editor, "forget it, do this")
    qtbot.keyClick(window.composer.editor, _Key.Key_Return, Qt.KeyboardModifier.AltModifier)
    assert fake_sender.last("run/start")[0] == RunStartParams(
        thread_id="t1", text="forget it, do this", mode="interrupt"
    )


def test_fifty_messages_typed_behind_an_open_question_are_all_sent_in_order(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    run = RunScript()
    with qtbot.waitSignal(window.interrupt_dialog_opened):
        window.controller.handle_run_event(run(InterruptEvent(interrupt=_approval())))
    window.controller.handle_run_event(run(RunFinished(outcome="interrupted")))
    for n in range(50):
        qtbot.keyClicks(window.composer.editor, f"note {n}")
        qtbot.keyClick(window.composer.editor, _Key.Key_Return)
    sent = [cast(RunStartParams, p).text for m, p, _ in fake_sender.sent if m == "run/start"]
    assert sent[-50:] == [f"note {n}" for n in range(50)]


# --- notifications, About, empty window -------------------------------------------------------


def test_a_run_that_finishes_or_asks_while_the_author_is_elsewhere_notifies(
    qtbot: QtBot, window: MainWindow
):
    shown: list[tuple[str, str]] = []
    window.notifier.shown.connect(lambda title, text: shown.append((title, text)))
    run = RunScript()
    window.controller.handle_run_event(run(RunStarted()))
    window.controller.handle_run_event(run(RunFinished()))
    assert shown == []  # the author is looking at the window
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow(), timeout=5000)
    second = RunScript(run_id="r2")
    window.controller.handle_run_event(second(RunStarted()))
    window.controller.handle_run_event(second(RunFinished()))
    assert shown == [("One", "The agent finished.")]
    third = RunScript(thread_id="t2", run_id="r3")
    window.controller.handle_run_event(third(RunStarted()))
    with qtbot.waitSignal(window.notifier.shown, timeout=10_000):
        window.controller.handle_run_event(third(InterruptEvent(interrupt=_approval())))
    assert shown[1:] == [("Two", "The agent asks: Write a.md")]


def test_a_burst_of_questions_while_away_is_one_summary_not_a_storm(
    qtbot: QtBot, window: MainWindow
):
    shown: list[tuple[str, str]] = []
    window.notifier.shown.connect(lambda title, text: shown.append((title, text)))
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow(), timeout=5000)
    run = RunScript(thread_id="t2")
    for n in range(300):
        interrupt = _approval().model_copy(update={"id": f"i{n}", "title": f"Write {n}.md"})
        window.controller.handle_run_event(run(InterruptEvent(interrupt=interrupt)))
    assert shown == [("Two", "The agent asks: Write 0.md")]
    qtbot.waitUntil(lambda: len(shown) == 2, timeout=10_000)
    title, text = shown[1]
    assert title == "Atrium" and text.startswith("299 updates: Two: The agent asks: Write 1.md;")
    assert text.endswith("; …") and len(text) < 200
    assert window.dialogs == {}  # another thread's questions wait in the inbox
    assert len(window.state.inbox) == 300


def test_about_lists_the_versions_and_esc_closes_it(qtbot: QtBot, window: MainWindow):
    window.menu_actions.about.trigger()
    about = window.about_dialog
    assert about is not None and about.isVisible()
    assert about.values["Sidecar"].text() == "not connected"
    qtbot.keyClick(about, _Key.Key_Escape)
    window.set_server_info(
        InitializeResult(
            protocol_version="1.0", server_version="0.1.0", data_dir="/data", model_configured=True
        )
    )
    window.menu_actions.about.trigger()
    about = window.about_dialog
    assert about is not None and about.isVisible()
    values = {name: label.text() for name, label in about.values.items()}
    assert values["Sidecar"] == "0.1.0 (protocol 1.0)" and values["Data folder"] == "/data"
    assert values["Protocol"] == PROTOCOL_VERSION
    assert values["PySide6"] == PySide6.__version__
    assert values["Python"].startswith("3.")
    qtbot.keyClick(about, _Key.Key_Escape)
    assert not about.isVisible()


def test_an_empty_window_says_what_to_do_first(qtbot: QtBot, fake_sender: FakeSender):
    window = _build(qtbot, fake_sender)
    window.controller.refresh()
    fake_sender.last("thread/list")[1].resolve(ThreadListResult(threads=()))
    assert window.empty_state.isVisible() and not window.transcript.isVisible()
    assert "No thread yet" in window.empty_state.text()
    assert "Ctrl+N" in window.empty_state.text()
    window.refresh_setup()
    fake_sender.last("settings/get")[1].resolve(
        SettingsInfo(
            model=None, api_base=None, workspace="/w", has_api_key=False, model_source="none"
        )
    )
    assert "No model is configured" in window.empty_state.text()
    window.controller.send_message("hello")
    fake_sender.last("thread/create")[1].resolve(thread_info("t9", "hello"))
    assert window.transcript.isVisible() and not window.empty_state.isVisible()


def test_qsettings_of_the_tests_stay_out_of_the_authors_config():
    path = app_settings().fileName()
    assert "qsettings" in path and QSettings().fileName() != ""


@pytest.mark.parametrize(
    ("source", "variable", "says", "forget_shown"),
    [
        ("environment", "ATRIUM_MODEL_API_KEY", "environment variable ATRIUM_MODEL_API_KEY", False),
        ("provider", "OPENAI_API_KEY", "environment variable OPENAI_API_KEY", False),
        ("keyring", None, "stored in the keyring", True),
        ("none", None, "No key is set", False),
    ],
)
def test_settings_say_truthfully_where_the_key_comes_from(
    qtbot: QtBot, source: str, variable: str | None, says: str, forget_shown: bool
):
    info = SettingsInfo.model_validate(
        {
            "model": "openai/gpt-4o-mini", "api_base": None, "workspace": "/w",
            "has_api_key": source != "none", "model_source": "environment",
            "api_key_source": source, "api_key_variable": variable,
        }
    )  # fmt: skip
    dialog = SettingsDialog(info)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.tabs.tabText(0) == "Model"  # where model errors send the author
    assert says in dialog.key_status_label.text()
    assert dialog.forget_key_check.isVisible() is forget_shown
    if source != "keyring":
        assert "keyring." not in dialog.key_status_label.text().replace("over the keyring", "")
    qtbot.keyClick(dialog, _Key.Key_Escape)
    assert not dialog.isVisible()


def test_a_dialog_that_opens_while_the_composer_is_empty_takes_the_focus(
    qtbot: QtBot, window: MainWindow
):
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        window.controller.handle_run_event(RunScript()(InterruptEvent(interrupt=_approval())))
    dialog = (opened.args or [])[0]
    qtbot.waitUntil(dialog.isActiveWindow, timeout=5000)


def test_questions_reloaded_with_a_thread_are_not_news(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    shown: list[tuple[str, str]] = []
    window.notifier.shown.connect(lambda title, text: shown.append((title, text)))
    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow(), timeout=5000)
    window.thread_list.select_row(1)
    fake_sender.last("thread/get")[1].resolve(
        ThreadGetResult.model_validate(
            {
                "thread": thread_info("t2", "Two", status="interrupted"),
                "messages": (),
                "interrupts": (_approval(),),
                "status": "interrupted",
            }
        )
    )
    assert window.state.inbox.count("t2") == 1
    assert shown == []


def test_long_titles_and_bodies_never_widen_the_window_or_its_dialogs(
    qtbot: QtBot, fake_sender: FakeSender
):
    state = SessionState()
    window = MainWindow(
        state, SessionController(fake_sender.api, state), coord=CoordController(fake_sender.api)
    )
    qtbot.addWidget(window)
    window.resize(780, 560)
    window.show()
    qtbot.waitUntil(lambda: window.width() == 780, timeout=2000)
    long_title = "T" * 200  # the longest title the protocol allows
    window.state.add_thread(thread_info("t1", long_title))
    window.controller.select_thread("t1")
    interrupt = _approval().model_copy(update={"title": "V" * 300, "body": "W" * 3000})
    with qtbot.waitSignal(window.interrupt_dialog_opened) as opened:
        window.controller.handle_run_event(RunScript()(InterruptEvent(interrupt=interrupt)))
    dialog = (opened.args or [])[0]
    QApplication.processEvents()
    assert window.width() == 780
    assert dialog.width() <= 800


def test_esc_in_an_editor_cancels_the_edit_not_the_run(
    qtbot: QtBot, window: MainWindow, fake_sender: FakeSender
):
    window.controller.handle_run_event(RunScript()(RunStarted()))
    qtbot.mouseClick(window.thread_list.rename_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=2000)
    editor = QApplication.focusWidget()
    assert editor is not None and editor.inherits("QLineEdit")
    qtbot.keyClick(editor, _Key.Key_Escape)
    assert "run/cancel" not in fake_sender.methods()
    qtbot.keyClick(window.thread_list.view, _Key.Key_Escape)  # then Esc stops the run
    assert fake_sender.last("run/cancel")[0] == ThreadRef(thread_id="t1")
