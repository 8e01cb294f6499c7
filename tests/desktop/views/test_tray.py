"""The tray icon's menu opens the window again and quits the app."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from desktop.views.main_window import MainWindow
from desktop.views.tray import build_tray
from tests.desktop.views.test_main_window import window

__all__ = ["window"]


def test_the_tray_menu_reopens_a_closed_window_and_quits(
    qtbot: QtBot,
    window: MainWindow,
):
    tray = build_tray(window)
    menu = tray.contextMenu()
    assert menu is not None
    open_action, quit_action = menu.actions()
    assert (open_action.text(), quit_action.text()) == ("Open Atrium", "Quit")
    window.hide()
    open_action.trigger()
    assert window.isVisible()
    with qtbot.waitSignal(window.quit_requested):
        quit_action.trigger()
