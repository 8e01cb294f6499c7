"""`ServerEditDialog`: the fields of one server's `mcp.json` entry (`ServerConfigInfo`)."""

from __future__ import annotations

from PySide6.QtCore import Signal, SignalInstance
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.models.servers import format_key_values, parse_key_values, parse_lines
from desktop.views.text import build_status_label
from sidecar.protocol import ServerConfigInfo

SECRET_HINT = (
    "Put secrets in env or headers as ${secret:NAME} (set the value with “Set secret…”), "
    "or read them from the environment with ${env:NAME}."
)


def _text_box(placeholder: str, height: int = 64) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setPlaceholderText(placeholder)
    box.setFixedHeight(height)
    return box


class ServerEditDialog(QDialog):
    """Adds a server (no `config`) or edits one (name fixed). Non-modal.

    On Save, a config that parses is emitted as `config_submitted(ServerConfigInfo)`; the panel
    sends it and closes the dialog on success or calls `show_error` with the sidecar's refusal.
    `preview_requested(ServerConfigInfo)` and `test_requested(ServerConfigInfo)` ask the panel
    to preview or test the config as it stands in the form.
    """

    config_submitted = Signal(object)
    preview_requested = Signal(object)
    test_requested = Signal(object)

    def __init__(self, config: ServerConfigInfo | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.editing = config is not None
        self.setWindowTitle(f"Edit {config.name}" if config else "Add MCP server")
        self.setModal(False)
        layout = QVBoxLayout(self)
        layout.addLayout(self._build_form())
        hint = QLabel(SECRET_HINT)
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.error_label = build_status_label()
        layout.addWidget(self.error_label)
        layout.addWidget(self._build_buttons())
        self.load(config or ServerConfigInfo(name="new-server"))
        if not self.editing:
            self.name_edit.clear()

    def _build_form(self) -> QFormLayout:
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("letters, digits, - and _")
        self.command_edit = QLineEdit()
        self.command_edit.setPlaceholderText("stdio: e.g. uvx or npx")
        self.args_edit = _text_box("one argument per line")
        self.env_edit = _text_box("KEY=value, one per line")
        self.cwd_edit = QLineEdit()
        self.cwd_edit.setPlaceholderText("default")
        self.url_edit = QLineEdit()
        self.url_edit.setPlaceholderText("streamable HTTP: e.g. http://127.0.0.1:3001/mcp")
        self.headers_edit = _text_box("Header=value, one per line", 48)
        self.enabled_check = QCheckBox("Enabled")
        self.required_check = QCheckBox("Required (turns wait for it to start)")
        self.trust_combo = QComboBox()
        self.trust_combo.addItems(["untrusted", "trusted"])
        self.timeout_spin = QDoubleSpinBox()
        self.timeout_spin.setRange(1, 86_400)
        self.timeout_spin.setSuffix(" s")
        self.idle_spin = QDoubleSpinBox()
        self.idle_spin.setRange(0, 86_400)
        self.idle_spin.setSuffix(" s")
        self.idle_spin.setSpecialValueText("none")
        self.allowed_edit = _text_box("empty: every tool not denied", 48)
        self.denied_edit = _text_box("one tool name per line", 48)
        form.addRow("Name", self.name_edit)
        form.addRow("Command", self.command_edit)
        form.addRow("Arguments", self.args_edit)
        form.addRow("Environment", self.env_edit)
        form.addRow("Working dir", self.cwd_edit)
        form.addRow("URL", self.url_edit)
        form.addRow("Headers", self.headers_edit)
        form.addRow("Trust", self.trust_combo)
        form.addRow("Call timeout", self.timeout_spin)
        form.addRow("Idle timeout", self.idle_spin)
        form.addRow("Allowed tools", self.allowed_edit)
        form.addRow("Denied tools", self.denied_edit)
        form.addRow("", self.enabled_check)
        form.addRow("", self.required_check)
        return form

    def _build_buttons(self) -> QDialogButtonBox:
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.preview_button = QPushButton("Preview launch")
        self.test_button = QPushButton("Test connection")
        buttons.addButton(self.preview_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.test_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self._on_save_clicked)
        buttons.rejected.connect(self.reject)
        self.preview_button.clicked.connect(lambda: self._emit_config(self.preview_requested))
        self.test_button.clicked.connect(lambda: self._emit_config(self.test_requested))
        return buttons

    def load(self, config: ServerConfigInfo) -> None:
        self.name_edit.setText(config.name)
        self.name_edit.setReadOnly(self.editing)
        self.command_edit.setText(config.command or "")
        self.args_edit.setPlainText("\n".join(config.args))
        self.env_edit.setPlainText(format_key_values(config.env))
        self.cwd_edit.setText(config.cwd or "")
        self.url_edit.setText(config.url or "")
        self.headers_edit.setPlainText(format_key_values(config.headers))
        self.enabled_check.setChecked(config.enabled)
        self.required_check.setChecked(config.required)
        self.trust_combo.setCurrentText(config.trust)
        self.timeout_spin.setValue(config.timeout)
        self.idle_spin.setValue(config.idle_timeout or 0)
        self.allowed_edit.setPlainText("\n".join(config.allowed_tools or ()))
        self.denied_edit.setPlainText("\n".join(config.denied_tools))

    def build_config(self) -> ServerConfigInfo:
        """The config the form describes.

        Raises:
            ValueError: a field does not parse or the config does not validate (pydantic's
                `ValidationError` is a `ValueError`).
        """
        allowed = parse_lines(self.allowed_edit.toPlainText())
        idle = self.idle_spin.value()
        return ServerConfigInfo.model_validate(
            {
                "name": self.name_edit.text().strip(),
                "command": self.command_edit.text().strip() or None,
                "args": parse_lines(self.args_edit.toPlainText()),
                "env": parse_key_values(self.env_edit.toPlainText(), "environment line"),
                "cwd": self.cwd_edit.text().strip() or None,
                "url": self.url_edit.text().strip() or None,
                "headers": parse_key_values(self.headers_edit.toPlainText(), "header line"),
                "enabled": self.enabled_check.isChecked(),
                "trust": self.trust_combo.currentText(),
                "timeout": self.timeout_spin.value(),
                "idle_timeout": idle if idle > 0 else None,
                "allowed_tools": allowed or None,
                "denied_tools": parse_lines(self.denied_edit.toPlainText()),
                "required": self.required_check.isChecked(),
            }
        )

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self.save_button.setEnabled(True)

    def _emit_config(self, signal: SignalInstance) -> ServerConfigInfo | None:
        try:
            config = self.build_config()
        except ValueError as exc:
            self.show_error(str(exc))
            return None
        if config.command is None and config.url is None:
            self.show_error("Give a command (stdio) or a URL (streamable HTTP).")
            return None
        self.error_label.hide()
        signal.emit(config)
        return config

    def _on_save_clicked(self) -> None:
        if self._emit_config(self.config_submitted) is not None:
            self.save_button.setEnabled(False)
