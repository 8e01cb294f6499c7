"""The main window's menu bar (File, Edit, View, Help) with the platform's standard shortcuts.

Shortcuts come from `QKeySequence.StandardKey` where the platform has one, with the common
binding as fallback (Linux desktops often define no Preferences key, so Ctrl+, is added). Each
shortcut exists once, on its action: the toolbar reuses the same actions. Esc ("Stop run") is
enabled only while the selected thread runs, so otherwise the key goes where it went before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from desktop.views.theme import APPEARANCES, Appearance

_Key = QKeySequence.StandardKey

APPEARANCE_LABELS: dict[Appearance, str] = {
    "system": "Follow the system",
    "light": "Light",
    "dark": "Dark",
}


def shortcuts(standard: QKeySequence.StandardKey, *also: str) -> list[QKeySequence]:
    """The platform's bindings for `standard`, plus `also` where missing (in that order)."""
    keys = list(QKeySequence.keyBindings(standard))
    for text in also:
        extra = QKeySequence(text)
        if all(key != extra for key in keys):
            keys.append(extra)
    return keys


@dataclass
class MenuActions:
    """The window's actions, for the toolbar, the window's slots and tests.

    `add_panel(action)` puts another dialog panel's action (e.g. Schedules) in the File menu
    next to MCP servers and Grants, so every command is in the menu bar; the docks' show/hide
    actions are in the View menu (`build_menu_bar`'s `panels`).
    """

    new_thread: QAction
    export_thread: QAction
    settings: QAction
    servers: QAction
    grants: QAction
    quit: QAction
    find: QAction
    stop_run: QAction
    next_thread: QAction
    previous_thread: QAction
    appearance: dict[Appearance, QAction]
    about: QAction
    file_menu: QMenu | None = None
    view_menu: QMenu | None = None

    def add_panel(self, action: QAction) -> None:
        if self.file_menu is not None:
            self.file_menu.insertAction(self._quit_separator(), action)

    def _quit_separator(self) -> QAction:
        actions = self.file_menu.actions() if self.file_menu is not None else []
        index = actions.index(self.quit)
        return actions[index - 1] if index > 0 else self.quit


def build_menu_bar(window: QMainWindow, panels: Iterable[QAction] = ()) -> MenuActions:
    """Fill `window`'s menu bar; `panels` are the docks' show/hide actions for View."""
    actions = MenuActions(
        new_thread=_action(window, "&New thread", shortcuts(_Key.New, "Ctrl+N")),
        export_thread=_action(window, "&Export thread…"),
        settings=_action(window, "&Settings…", shortcuts(_Key.Preferences, "Ctrl+,")),
        servers=_action(window, "MCP &servers…"),
        grants=_action(window, "&Grants…"),
        quit=_action(window, "&Quit", shortcuts(_Key.Quit, "Ctrl+Q")),
        find=_action(window, "&Find in thread…", shortcuts(_Key.Find, "Ctrl+F")),
        stop_run=_action(window, "S&top run", [QKeySequence("Esc")]),
        next_thread=_action(window, "&Next thread", shortcuts(_Key.NextChild, "Ctrl+Tab")),
        previous_thread=_action(
            window, "&Previous thread", shortcuts(_Key.PreviousChild, "Ctrl+Shift+Tab")
        ),
        appearance={},
        about=_action(window, "&About Atrium"),
    )
    actions.settings.setMenuRole(QAction.MenuRole.PreferencesRole)
    actions.quit.setMenuRole(QAction.MenuRole.QuitRole)
    actions.about.setMenuRole(QAction.MenuRole.AboutRole)
    actions.stop_run.setEnabled(False)
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    actions.file_menu = file_menu
    file_menu.addAction(actions.new_thread)
    file_menu.addAction(actions.export_thread)
    file_menu.addSeparator()
    file_menu.addAction(actions.settings)
    file_menu.addAction(actions.servers)
    file_menu.addAction(actions.grants)
    file_menu.addSeparator()
    file_menu.addAction(actions.quit)
    edit_menu = bar.addMenu("&Edit")
    edit_menu.addAction(actions.find)
    edit_menu.addSeparator()
    edit_menu.addAction(actions.stop_run)
    view_menu = bar.addMenu("&View")
    actions.view_menu = view_menu
    view_menu.addAction(actions.next_thread)
    view_menu.addAction(actions.previous_thread)
    view_menu.addSeparator()
    appearance_menu = view_menu.addMenu("&Appearance")
    group = QActionGroup(window)
    group.setExclusive(True)
    for appearance in APPEARANCES:
        action = QAction(APPEARANCE_LABELS[appearance], window)
        action.setCheckable(True)
        group.addAction(action)
        appearance_menu.addAction(action)
        actions.appearance[appearance] = action
    panel_actions = list(panels)
    if panel_actions:
        view_menu.addSeparator()
        for action in panel_actions:
            view_menu.addAction(action)
    help_menu = bar.addMenu("&Help")
    help_menu.addAction(actions.about)
    return actions


def _action(window: QMainWindow, text: str, keys: list[QKeySequence] | None = None) -> QAction:
    action = QAction(text, window)
    if keys:
        action.setShortcuts(keys)
    return action
