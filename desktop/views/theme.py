"""Light and dark: the app follows the system's colour scheme live, or the author's choice.

`ThemeController` keeps the choice (`system`, `light`, `dark`) in QSettings under
`view/appearance` and applies a palette to the whole application. With `system` it listens to
`QStyleHints.colorSchemeChanged` (Qt >= 6.5), so switching the desktop to dark turns the window
dark at once. A system that does not say (`Unknown`) keeps the platform's own palette.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, cast

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

Appearance: TypeAlias = Literal["system", "light", "dark"]
Scheme: TypeAlias = Literal["light", "dark"]

APPEARANCES: tuple[Appearance, ...] = ("system", "light", "dark")
SETTINGS_KEY = "view/appearance"

_Role = QPalette.ColorRole

_LIGHT: dict[QPalette.ColorRole, str] = {
    _Role.Window: "#efefef",
    _Role.WindowText: "#1f2328",
    _Role.Base: "#ffffff",
    _Role.AlternateBase: "#f6f8fa",
    _Role.ToolTipBase: "#ffffdc",
    _Role.ToolTipText: "#1f2328",
    _Role.PlaceholderText: "#6e7781",
    _Role.Text: "#1f2328",
    _Role.Button: "#efefef",
    _Role.ButtonText: "#1f2328",
    _Role.BrightText: "#cf222e",
    _Role.Light: "#ffffff",
    _Role.Midlight: "#e3e3e3",
    _Role.Mid: "#b8b8b8",
    _Role.Dark: "#9f9f9f",
    _Role.Shadow: "#767676",
    _Role.Highlight: "#3874d8",
    _Role.HighlightedText: "#ffffff",
    _Role.Link: "#0969da",
    _Role.LinkVisited: "#8250df",
}

_DARK: dict[QPalette.ColorRole, str] = {
    _Role.Window: "#202124",
    _Role.WindowText: "#e8eaed",
    _Role.Base: "#17181a",
    _Role.AlternateBase: "#26282b",
    _Role.ToolTipBase: "#2b2d31",
    _Role.ToolTipText: "#e8eaed",
    _Role.PlaceholderText: "#9aa0a6",
    _Role.Text: "#e8eaed",
    _Role.Button: "#2b2d31",
    _Role.ButtonText: "#e8eaed",
    _Role.BrightText: "#ff7b72",
    _Role.Light: "#3c3f44",
    _Role.Midlight: "#33363a",
    _Role.Mid: "#2a2c30",
    _Role.Dark: "#141517",
    _Role.Shadow: "#000000",
    _Role.Highlight: "#3d6fb4",
    _Role.HighlightedText: "#ffffff",
    _Role.Link: "#8ab4f8",
    _Role.LinkVisited: "#c58af9",
}

_DISABLED = {"light": "#8c959f", "dark": "#6f7378"}


def build_palette(scheme: Scheme) -> QPalette:
    """The app's palette for `scheme` (disabled text greyed in both)."""
    palette = QPalette()
    for role, colour in (_DARK if scheme == "dark" else _LIGHT).items():
        palette.setColor(role, QColor(colour))
    grey = QColor(_DISABLED[scheme])
    for role in (_Role.WindowText, _Role.Text, _Role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, grey)
    return palette


def system_scheme() -> Scheme | None:
    """What the platform says (None when it does not)."""
    return _scheme_of(QGuiApplication.styleHints().colorScheme())


def _scheme_of(value: Qt.ColorScheme) -> Scheme | None:
    if value == Qt.ColorScheme.Dark:
        return "dark"
    if value == Qt.ColorScheme.Light:
        return "light"
    return None


class ThemeController(QObject):
    """Applies the chosen appearance to the application and keeps the choice.

    Signals: `scheme_changed(str)` ("light" or "dark") after a palette change.
    """

    scheme_changed = Signal(str)

    def __init__(self, settings: QSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._base_palette = QPalette(QApplication.palette())
        saved = str(settings.value(SETTINGS_KEY, "system"))
        self.appearance: Appearance = cast(Appearance, saved) if saved in APPEARANCES else "system"
        self._system: Scheme | None = system_scheme()
        self.scheme: Scheme = "light"
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_changed)
        self._apply()

    def set_appearance(self, appearance: Appearance) -> None:
        """Choose System, Light or Dark; saved at once."""
        self.appearance = appearance
        self._settings.setValue(SETTINGS_KEY, appearance)
        self._apply()

    def _on_system_changed(self, value: Qt.ColorScheme) -> None:
        self._system = _scheme_of(value)
        if self.appearance == "system":
            self._apply()

    def _apply(self) -> None:
        wanted: Scheme | None = (
            self._system if self.appearance == "system" else cast(Scheme, self.appearance)
        )
        if wanted is None:  # the platform does not say: its own palette
            QApplication.setPalette(self._base_palette)
            self.scheme = "dark" if _is_dark(self._base_palette) else "light"
        else:
            QApplication.setPalette(build_palette(wanted))
            self.scheme = wanted
        self.scheme_changed.emit(self.scheme)


def _is_dark(palette: QPalette) -> bool:
    return palette.color(_Role.Window).lightness() < 128
