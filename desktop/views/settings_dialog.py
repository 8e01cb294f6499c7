"""`SettingsDialog`: model, API base, API key (to the OS keyring), the workspace folder, and how
many daily backups of the database to keep."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.plans import CoordController
from desktop.views.profiles_tab import ProfilesTabWidget
from sidecar.protocol import MAX_BACKUP_DAYS, SettingsInfo, SettingsSetParams

_SOURCE_TEXT = {
    "settings": "",
    "environment": "The model currently comes from the environment (ATRIUM_MODEL).",
    "none": "No model is configured: the agent cannot answer, but direct commands still run.",
}


def key_source_text(info: SettingsInfo) -> str:
    """Where the key the model uses comes from, said truthfully."""
    variable = info.api_key_variable
    if info.api_key_source == "environment":
        name = variable or "ATRIUM_MODEL_API_KEY"
        return f"The key comes from the environment variable {name}; it wins over the keyring."
    if info.api_key_source == "provider":
        name = variable or "the provider's variable"
        return (
            f"The key comes from the environment variable {name} (the provider's usual one); "
            "it wins over the keyring."
        )
    if info.api_key_source == "keyring" or info.has_api_key:
        return "A key is stored in the keyring."
    return "No key is set (none in the environment, none in the keyring)."


class SettingsDialog(QDialog):
    """Edits `SettingsInfo`; on Save emits `settings_submitted(SettingsSetParams)` carrying only
    the fields the author changed. The API key field starts empty: leaving it empty keeps the
    stored key, typing replaces it, and "Forget the stored key" sends an empty key (removes it).

    With a `CoordController` a Profiles tab (`profiles_tab`) edits the subagent profiles; it
    saves them itself (`profile/set`), apart from the Model tab's Save."""

    settings_submitted = Signal(object)

    def __init__(
        self,
        info: SettingsInfo | None = None,
        parent: QWidget | None = None,
        *,
        coord: CoordController | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setModal(False)
        self._info: SettingsInfo | None = None
        self.folder_dialog: QFileDialog | None = None
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_general(), "Model")  # errors point to "Settings → Model"
        self.profiles_tab: ProfilesTabWidget | None = None
        if coord is not None:
            self.profiles_tab = ProfilesTabWidget(coord)
            self.tabs.addTab(self.profiles_tab, "Profiles")
            self.profiles_tab.refresh()
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        if info is not None:
            self.load(info)

    def _build_general(self) -> QWidget:
        """The model, key and workspace form with its own Save (the Profiles tab saves apart)."""
        general = QWidget()
        layout = QVBoxLayout(general)
        layout.addLayout(self._build_form())
        self.source_label = QLabel()
        self.source_label.setWordWrap(True)
        layout.addWidget(self.source_label)
        layout.addStretch(1)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(self._on_save_clicked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        return general

    def _build_form(self) -> QFormLayout:
        form = QFormLayout()
        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("e.g. anthropic/claude-sonnet-4-5 or ollama/llama3")
        self.api_base_edit = QLineEdit()
        self.api_base_edit.setPlaceholderText("Default for the provider")
        self.api_key_edit = QLineEdit()
        self.api_key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_status_label = QLabel()
        self.key_status_label.setWordWrap(True)
        self.forget_key_check = QCheckBox("Forget the stored key")
        self.workspace_edit = QLineEdit()
        self.browse_button = QPushButton("Choose…")
        self.browse_button.clicked.connect(self._on_browse_clicked)
        workspace_row = QHBoxLayout()
        workspace_row.addWidget(self.workspace_edit, 1)
        workspace_row.addWidget(self.browse_button)
        self.backup_days_spin = QSpinBox()
        self.backup_days_spin.setRange(0, MAX_BACKUP_DAYS)
        self.backup_days_spin.setSuffix(" days")
        self.backup_days_spin.setSpecialValueText("Off")
        self.backup_days_spin.setToolTip(
            "A copy of the database is made once a day in the backups folder beside it; this "
            "many of the newest are kept. Off makes none (and removes none)."
        )
        form.addRow("Model", self.model_edit)
        form.addRow("API base", self.api_base_edit)
        form.addRow("API key", self.api_key_edit)
        form.addRow("", self.key_status_label)
        form.addRow("", self.forget_key_check)
        form.addRow("Workspace", workspace_row)
        form.addRow("Daily backups", self.backup_days_spin)
        return form

    def load(self, info: SettingsInfo) -> None:
        """Show `info`; later edits are measured against it."""
        self._info = info
        self.model_edit.setText(info.model or "")
        self.api_base_edit.setText(info.api_base or "")
        self.api_key_edit.clear()
        self.workspace_edit.setText(info.workspace)
        self.backup_days_spin.setValue(info.backup_days)
        self.forget_key_check.setChecked(False)
        stored = info.api_key_source == "keyring" or (
            info.has_api_key and info.api_key_source == "none"  # a sidecar that does not say
        )
        self.forget_key_check.setVisible(stored)
        self.key_status_label.setText(key_source_text(info))
        if info.api_key_source in ("environment", "provider"):
            self.api_key_edit.setPlaceholderText("Type to store a key (the variable still wins)")
        elif stored:
            self.api_key_edit.setPlaceholderText("Stored in keyring; type to replace")
        else:
            self.api_key_edit.setPlaceholderText("Not needed for local models")
        self.source_label.setText(_SOURCE_TEXT.get(info.model_source, ""))

    def build_params(self) -> SettingsSetParams:
        """The `settings/set` params for what changed since `load` (nothing → all None)."""
        info = self._info
        changes: dict[str, str | int] = {}
        model = self.model_edit.text().strip()
        if model != ((info.model if info else None) or ""):
            changes["model"] = model
        api_base = self.api_base_edit.text().strip()
        if api_base != ((info.api_base if info else None) or ""):
            changes["api_base"] = api_base
        workspace = self.workspace_edit.text().strip()
        if workspace and workspace != (info.workspace if info else ""):
            changes["workspace"] = workspace
        backup_days = self.backup_days_spin.value()
        if info is not None and backup_days != info.backup_days:
            changes["backup_days"] = backup_days
        key = self.api_key_edit.text().strip()
        if key:
            changes["api_key"] = key
        elif self.forget_key_check.isChecked():
            changes["api_key"] = ""
        return SettingsSetParams.model_validate(changes)

    def _on_save_clicked(self) -> None:
        self.settings_submitted.emit(self.build_params())
        self.accept()

    def _on_browse_clicked(self) -> None:
        dialog = QFileDialog(self, "Choose the workspace folder", self.workspace_edit.text())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self._on_folder_selected)
        self.folder_dialog = dialog
        dialog.open()

    def _on_folder_selected(self, path: str) -> None:
        if path:
            self.workspace_edit.setText(path)
