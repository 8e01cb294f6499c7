"""Where the window's own preferences live (QSettings), and its size, place and layout.

`app_settings()` is the one QSettings the window uses: an INI file in the user's config folder
(tests point `QSettings.setPath` at a temporary folder). The geometry, the dock layout and the
thread-list splitter are saved on close and restored when the next window is built; a value that
does not restore (another Qt version, a screen that is gone) is ignored.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow, QSplitter

ORGANIZATION = "Atrium"
APPLICATION = "desktop"

GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
SPLITTER_KEY = "window/splitter"


def app_settings() -> QSettings:
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )


def save_layout(settings: QSettings, window: QMainWindow, splitter: QSplitter) -> None:
    settings.setValue(GEOMETRY_KEY, window.saveGeometry())
    settings.setValue(STATE_KEY, window.saveState())
    settings.setValue(SPLITTER_KEY, splitter.saveState())
    settings.sync()


def restore_layout(settings: QSettings, window: QMainWindow, splitter: QSplitter) -> bool:
    """Restore what `save_layout` kept; False when nothing was (the defaults stay)."""
    geometry = _bytes(settings.value(GEOMETRY_KEY))
    if geometry is None:
        return False
    window.restoreGeometry(geometry)
    state = _bytes(settings.value(STATE_KEY))
    if state is not None:
        window.restoreState(state)
    sizes = _bytes(settings.value(SPLITTER_KEY))
    if sizes is not None:
        splitter.restoreState(sizes)
    return True


def _bytes(value: object) -> QByteArray | None:
    if isinstance(value, QByteArray) and not value.isEmpty():
        return value
    if isinstance(value, bytes) and value:
        return QByteArray(value)
    return None
