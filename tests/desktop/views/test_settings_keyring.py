"""The Settings dialog without a keyring: it says what is missing, offers the encrypted file or
this session, waits for the sidecar's answer, and loses nothing typed when the save is refused
or the keyring fails during it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.settings_dialog import SettingsDialog
from sidecar.protocol import ErrorCode, ErrorObject, SettingsInfo, SettingsSetParams

PROBLEM = "There is no keyring on this computer: install GNOME Keyring or KWallet."
WORKING = SettingsInfo(
    model=None, api_base=None, workspace="/w", has_api_key=False, model_source="none"
)
NO_KEYRING = WORKING.model_copy(update={"keyring_problem": PROBLEM, "key_file": "/d/keys/x.enc"})


def _dialog(qtbot: QtBot, info: SettingsInfo) -> SettingsDialog:
    dialog = SettingsDialog(info)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_without_a_keyring_the_choice_is_offered_with_the_reason_and_what_protects_the_file(
    qtbot: QtBot,
):
    dialog = _dialog(qtbot, NO_KEYRING)

    assert dialog.place_box.isVisible()
    assert PROBLEM in dialog.keyring_label.text()
    assert "/d/keys/x.enc" in dialog.file_note.text()
    assert dialog.chosen_place() == "session"
    qtbot.keyClicks(dialog.api_key_edit, "sk-1")
    dialog.file_radio.setChecked(True)
    assert dialog.build_params() == SettingsSetParams(api_key="sk-1", api_key_storage="file")


def test_with_a_keyring_there_is_no_choice(qtbot: QtBot):
    dialog = _dialog(qtbot, WORKING)

    assert not dialog.place_box.isVisible()
    qtbot.keyClicks(dialog.api_key_edit, "sk-1")
    assert dialog.build_params() == SettingsSetParams(api_key="sk-1")


def test_a_key_kept_for_the_session_moves_to_the_file_without_typing_it_again(qtbot: QtBot):
    dialog = _dialog(qtbot, NO_KEYRING.model_copy(update={"api_key_source": "session"}))

    dialog.file_radio.setChecked(True)

    assert dialog.build_params() == SettingsSetParams(api_key_storage="file")


def test_a_refused_save_keeps_the_dialog_open_with_everything_typed(qtbot: QtBot):
    dialog = _dialog(qtbot, WORKING)
    dialog.model_edit.setText("openai/gpt-4o-mini")
    qtbot.keyClicks(dialog.api_key_edit, "sk-typed")
    with qtbot.waitSignal(dialog.settings_submitted):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and not dialog.save_button.isEnabled()

    dialog.show_error(ErrorObject(code=ErrorCode.SETTINGS_INVALID, message="workspace is a file"))

    assert dialog.isVisible() and dialog.save_button.isEnabled()
    assert dialog.error_label.isVisible()
    assert (dialog.model_edit.text(), dialog.api_key_edit.text()) == (
        "openai/gpt-4o-mini",
        "sk-typed",
    )


def test_a_keyring_that_fails_during_the_save_leaves_the_dialog_open_with_the_choice(
    qtbot: QtBot,
):
    dialog = _dialog(qtbot, WORKING)
    qtbot.keyClicks(dialog.api_key_edit, "sk-typed")
    with qtbot.waitSignal(dialog.settings_submitted):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    dialog.show_saved(
        NO_KEYRING.model_copy(update={"api_key_source": "session", "has_api_key": True})
    )

    assert dialog.isVisible() and dialog.place_box.isVisible()
    assert dialog.error_label.isVisible()
    dialog.file_radio.setChecked(True)
    assert dialog.build_params() == SettingsSetParams(api_key_storage="file")


def test_a_saved_answer_closes_the_dialog(qtbot: QtBot):
    dialog = _dialog(qtbot, WORKING)
    with qtbot.waitSignal(dialog.settings_submitted):
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)

    with qtbot.waitSignal(dialog.accepted):
        dialog.show_saved(WORKING)
