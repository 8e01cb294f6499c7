"""The storage dialog: what was refused, and both ways out (a backup picked from the list, or a
fresh start)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.storage_dialog import StorageRefusalDialog
from sidecar.protocol import BackupInfo, StorageRefusal

NEWEST = BackupInfo(path="/data/backups/atrium-20240502T080000Z.db", taken_at=1714636800, size=2)
OLDER = BackupInfo(path="/data/backups/atrium-20240501T080000Z.db", taken_at=1714550400, size=2)


def _dialog(qtbot: QtBot, backups: list[BackupInfo]) -> StorageRefusalDialog:
    dialog = StorageRefusalDialog()
    qtbot.addWidget(dialog)
    dialog.show_refusal(
        StorageRefusal(
            problem="damaged",
            database="/data/atrium.db",
            detail="quick_check found: page 7 is never used",
            backups=backups,
        )
    )
    return dialog


def test_restore_lists_the_backups_newest_first_and_restores_the_one_picked(qtbot: QtBot):
    dialog = _dialog(qtbot, [NEWEST, OLDER])
    assert dialog.isVisible() and "/data/atrium.db" in dialog.message_label.text()

    qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    assert dialog.pages.currentIndex() == 1
    assert [dialog.backup_list.item(i).toolTip() for i in range(2)] == [NEWEST.path, OLDER.path]
    dialog.backup_list.setCurrentRow(1)
    with qtbot.waitSignal(dialog.restore_requested) as requested:
        qtbot.mouseClick(dialog.restore_chosen_button, Qt.MouseButton.LeftButton)

    assert requested.args == [OLDER.path]
    assert not dialog.isVisible()


def test_start_fresh_is_asked_for_and_without_backups_restore_is_not_offered(qtbot: QtBot):
    dialog = _dialog(qtbot, [])
    assert not dialog.restore_button.isEnabled()

    with qtbot.waitSignal(dialog.start_fresh_requested):
        qtbot.mouseClick(dialog.start_fresh_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()


def test_a_second_refusal_opens_it_again_on_the_first_page(qtbot: QtBot):
    dialog = _dialog(qtbot, [NEWEST])
    qtbot.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    dialog.reject()

    dialog.show_refusal(
        StorageRefusal(problem="emptied", database="/data/atrium.db", detail="0 bytes")
    )

    assert dialog.isVisible() and dialog.pages.currentIndex() == 0
    assert dialog.backup_list.count() == 0 and not dialog.restore_button.isEnabled()
