"""The tray icon: with one, closing the window hides it and Atrium keeps running, so schedules
and the heartbeat still fire; the icon's menu opens the window again or quits. Without a
system tray, closing the window quits as before."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMenu, QStyle, QSystemTrayIcon

from desktop.views.main_window import MainWindow


def build_tray(window: MainWindow) -> QSystemTrayIcon:
    """The icon and its menu: Open Atrium (or a click on the icon), Quit."""
    icon = window.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
    tray = QSystemTrayIcon(icon, window)
    tray.setToolTip("Atrium: schedules keep running while the window is closed")
    menu = QMenu(window)
    open_action = menu.addAction("Open Atrium")
    quit_action = menu.addAction("Quit")

    def show_window() -> None:
        window.showNormal()
        window.raise_()
        window.activateWindow()

    open_action.triggered.connect(show_window)
    quit_action.triggered.connect(window.quit)
    tray.activated.connect(
        lambda reason: show_window() if reason == QSystemTrayIcon.ActivationReason.Trigger else None
    )
    tray.setContextMenu(menu)
    return tray


def install_tray(app: QApplication, window: MainWindow) -> QSystemTrayIcon | None:
    """Live in the tray when the platform has one (closing the window then only hides it)."""
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    tray = build_tray(window)
    app.setQuitOnLastWindowClosed(False)
    tray.show()
    return tray
