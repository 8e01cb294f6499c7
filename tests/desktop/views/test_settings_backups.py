"""The Settings dialog's daily backups: shown as stored, sent only when changed, Off is 0."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.settings_dialog import SettingsDialog
from sidecar.protocol import SettingsInfo, SettingsSetParams

INFO = SettingsInfo(
    model=None,
    api_base=None,
    workspace="/home/author/book",
    has_api_key=False,
    model_source="none",
    backup_days=7,
)


def test_the_retention_is_shown_and_a_change_is_sent(qtbot: QtBot):
    dialog = SettingsDialog(INFO)
    qtbot.addWidget(dialog)
    assert dialog.backup_days_spin.value() == 7
    assert dialog.build_params() == SettingsSetParams()

    dialog.backup_days_spin.setValue(0)
    assert dialog.backup_days_spin.text() == "Off"
    with qtbot.waitSignal(dialog.settings_submitted) as submitted:
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert submitted.args == [SettingsSetParams(backup_days=0)]
