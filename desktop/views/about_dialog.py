"""Help → About: what is running — the app, the wire protocol, the sidecar, Python, Qt and
PySide6, and where the data lives."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from sidecar.protocol import PROTOCOL_VERSION, InitializeResult


def app_version() -> str:
    try:
        return version("atrium")
    except PackageNotFoundError:
        return "development"


def version_rows(server: InitializeResult | None = None) -> list[tuple[str, str]]:
    """What the About box lists, in order (`server`: the running sidecar's answer, if any)."""
    sidecar = (
        f"{server.server_version} (protocol {server.protocol_version})"
        if server is not None
        else "not connected"
    )
    rows = [
        ("Atrium", app_version()),
        ("Protocol", PROTOCOL_VERSION),
        ("Sidecar", sidecar),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("System", platform.platform(terse=True)),
    ]
    if server is not None:
        rows.append(("Data folder", server.data_dir))
    return rows


class AboutDialog(QDialog):
    """Versions, selectable for bug reports; Esc or Close closes it."""

    def __init__(
        self, parent: QWidget | None = None, server: InitializeResult | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Atrium")
        layout = QVBoxLayout(self)
        heading = QLabel("<b>Atrium</b> — a desktop workbench for authors and their agent")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        form = QFormLayout()
        self.values: dict[str, QLabel] = {}
        for name, value in version_rows(server):
            label = QLabel(value)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(name, label)
            self.values[name] = label
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
