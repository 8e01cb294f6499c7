"""Small dialogs of the MCP servers panel: a text report, a server's logs, setting a secret."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.models.servers import format_protocol_log
from desktop.views.text import build_code_view, build_status_label
from sidecar.protocol import ServerLogsResult


class ReportDialog(QDialog):
    """Read-only monospace text with a heading: a launch preview, a test or import result."""

    def __init__(self, title: str, heading: str, text: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setModal(False)
        self.resize(640, 420)
        layout = QVBoxLayout(self)
        self.heading_label = QLabel(heading)
        self.heading_label.setTextFormat(Qt.TextFormat.PlainText)
        self.text_view = build_code_view(text)
        layout.addWidget(self.heading_label)
        layout.addWidget(self.text_view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class ServerLogsDialog(QDialog):
    """A server's stderr tail and protocol log, in two tabs; `load` replaces both."""

    refresh_requested = Signal()

    def __init__(self, name: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.name = name
        self.setWindowTitle(f"Logs: {name}")
        self.setModal(False)
        self.resize(760, 480)
        self.stderr_view = build_code_view()
        self.protocol_view = build_code_view()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.stderr_view, "Stderr")
        self.tabs.addTab(self.protocol_view, "Protocol")
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.refresh_button = buttons.addButton("Refresh", QDialogButtonBox.ButtonRole.ActionRole)
        self.refresh_button.clicked.connect(self.refresh_requested)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

    def load(self, logs: ServerLogsResult) -> None:
        self.error_label.hide()
        self.stderr_view.setPlainText("\n".join(logs.stderr) or "(no stderr output)")
        self.protocol_view.setPlainText(format_protocol_log(logs) or "(nothing logged)")

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()


class SecretDialog(QDialog):
    """Stores a `${secret:NAME}` value in the OS keyring; an empty value removes it.

    Emits `secret_submitted(name, value)`; the panel closes it on success or calls `show_error`.
    """

    secret_submitted = Signal(str, str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Set secret")
        self.setModal(False)
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("e.g. GITHUB_TOKEN")
        self.value_edit = QLineEdit()
        self.value_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.value_edit.setPlaceholderText("empty: remove the stored secret")
        form.addRow("Name", self.name_edit)
        form.addRow("Value", self.value_edit)
        note = QLabel("Refer to it as ${secret:NAME} in a server's env or headers.")
        note.setWordWrap(True)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(self._on_save_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self.save_button.setEnabled(True)

    def _on_save_clicked(self) -> None:
        name = self.name_edit.text().strip()
        if not name:
            self.show_error("Give the secret a name.")
            return
        self.save_button.setEnabled(False)
        self.secret_submitted.emit(name, self.value_edit.text())
