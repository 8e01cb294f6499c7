"""`SettingsDialog`: model, API base, API key, the workspace folder, and how many daily backups of
the database to keep.

The key goes to the OS keyring. Where there is none (`SettingsInfo.keyring_problem` says what is
missing and how to add one), the author chooses between an encrypted file in the data folder
(what protects it is said plainly) and this session only. Save keeps the dialog open until the
sidecar answers: a refusal is shown in the dialog with everything typed still there.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.plans import CoordController
from desktop.views.profiles_tab import ProfilesTabWidget
from sidecar.protocol import (
    MAX_BACKUP_DAYS,
    ApiKeyPlace,
    ErrorObject,
    SettingsInfo,
    SettingsSetParams,
)

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
    if info.api_key_source == "file":
        return "A key is kept in the encrypted file in Atrium's data folder."
    if info.api_key_source == "session":
        return "A key is kept for this session only: type it again after Atrium restarts."
    if info.api_key_source == "keyring" or info.has_api_key:
        return "A key is stored in the keyring."
    return "No key is set (none in the environment, none stored)."


FILE_CHOICE = "Keep it in an encrypted file in Atrium's data folder"
SESSION_CHOICE = "Use it for this session only (type it again after Atrium restarts)"


def file_choice_note(info: SettingsInfo) -> str:
    """What protects the encrypted file, said plainly."""
    where = f" ({info.key_file})" if info.key_file else ""
    return (
        f"The file{where} and the key that encrypts it can be read only by your user account. "
        "That keeps the API key out of plain sight and out of the settings file, but any program "
        "running as you could read it: a keyring is safer."
    )


_STORED = ("keyring", "file", "session")


class SettingsDialog(QDialog):
    """Edits `SettingsInfo`; on Save emits `settings_submitted(SettingsSetParams)` carrying only
    the fields the author changed, and waits: the window hands the sidecar's answer to
    `show_saved` (closes, unless the key could not be kept as asked) or `show_error` (stays open
    with the reason and everything typed). The API key field starts empty: leaving it empty keeps
    the stored key, typing replaces it, and "Forget the stored key" sends an empty key (removes
    it). Without a keyring `place_box` says why and offers the encrypted file or this session.

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
        self._sent: SettingsSetParams | None = None
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
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(False)
        layout.addWidget(self.error_label)
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
        self.keyring_label = QLabel()
        self.keyring_label.setWordWrap(True)
        self.file_radio = QRadioButton(FILE_CHOICE)
        self.file_note = QLabel()
        self.file_note.setWordWrap(True)
        self.session_radio = QRadioButton(SESSION_CHOICE)
        self.place_group = QButtonGroup(self)
        self.place_group.addButton(self.file_radio)
        self.place_group.addButton(self.session_radio)
        self.place_box = QWidget()
        place_layout = QVBoxLayout(self.place_box)
        place_layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.keyring_label, self.file_radio, self.file_note, self.session_radio):
            place_layout.addWidget(widget)
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
        form.addRow("", self.place_box)
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
        stored = info.api_key_source in _STORED or (
            info.has_api_key and info.api_key_source == "none"  # a sidecar that does not say
        )
        self.forget_key_check.setVisible(stored)
        self.key_status_label.setText(key_source_text(info))
        if info.api_key_source in ("environment", "provider"):
            self.api_key_edit.setPlaceholderText("Type to store a key (the variable still wins)")
        elif stored:
            self.api_key_edit.setPlaceholderText("Stored; type to replace")
        else:
            self.api_key_edit.setPlaceholderText("Not needed for local models")
        self.source_label.setText(_SOURCE_TEXT.get(info.model_source, ""))
        self._show_places(info)
        self._show_error(None)
        self.save_button.setEnabled(True)

    def _show_places(self, info: SettingsInfo) -> None:
        """Without a keyring: why, and where the key can be kept instead."""
        problem = info.keyring_problem
        self.place_box.setVisible(problem is not None)
        self.keyring_label.setText(problem or "")
        self.file_note.setText(file_choice_note(info))
        chosen = self.file_radio if info.api_key_source == "file" else self.session_radio
        chosen.setChecked(True)

    def chosen_place(self) -> ApiKeyPlace | None:
        """Where the author asked to keep the key; None: the keyring (no choice is shown)."""
        if self._info is None or self._info.keyring_problem is None:
            return None
        return "file" if self.file_radio.isChecked() else "session"

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
        place = self.chosen_place()
        current = info.api_key_source if info is not None else "none"
        if key:
            changes["api_key"] = key
            if place is not None:
                changes["api_key_storage"] = place
        elif self.forget_key_check.isChecked():
            changes["api_key"] = ""
        elif place is not None and current in _STORED and place != current:
            changes["api_key_storage"] = place  # keep the stored key elsewhere
        return SettingsSetParams.model_validate(changes)

    def show_saved(self, info: SettingsInfo) -> None:
        """The sidecar saved: close, unless the key typed for the keyring is kept for this
        session only because the keyring failed; then stay, saying so, with the choice."""
        sent, self._sent = self._sent, None
        fell_back = (
            sent is not None
            and bool(sent.api_key)
            and (sent.api_key_storage or "keyring") == "keyring"
            and info.api_key_source == "session"
        )
        if not fell_back:
            self.accept()
            return
        self.load(info)
        self._show_error(
            "Everything else is saved. The key works for this session only, because no keyring "
            "can keep it; to keep it after Atrium restarts, choose the encrypted file and Save."
        )

    def show_error(self, error: ErrorObject) -> None:
        """The sidecar refused: say why here, with everything typed kept."""
        self._sent = None
        self.save_button.setEnabled(True)
        self._show_error(f"Not saved: {error.message}")

    def _show_error(self, text: str | None) -> None:
        self.error_label.setText(text or "")
        self.error_label.setVisible(bool(text))

    def _on_save_clicked(self) -> None:
        params = self.build_params()
        self._sent = params
        self.save_button.setEnabled(False)
        self.settings_submitted.emit(params)

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
