"""`StorageRefusalDialog`: the sidecar refused a damaged or emptied database; what now.

Shown instead of restarting the sidecar in a loop. It says which file and what was found, and
offers both ways out: "Restore a backup…" (then a list of the automatic backups, newest first,
to pick one from) and "Start fresh". Either way the damaged file is moved aside, never deleted,
and the sidecar does the moving (`StorageController`).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.views.status_widgets import wrapping_label
from sidecar.protocol import BackupInfo, StorageRefusal

PATH_ROLE = Qt.ItemDataRole.UserRole


def backup_label(backup: BackupInfo) -> str:
    """`2024-05-01 09:00 (1.2 MB)`, in local time."""
    taken = datetime.fromtimestamp(backup.taken_at).strftime("%Y-%m-%d %H:%M")
    return f"{taken} ({backup.size / 1_000_000:.1f} MB)"


def refusal_text(refusal: StorageRefusal) -> str:
    what = "is damaged" if refusal.problem == "damaged" else "was emptied"
    name = Path(refusal.database)
    return (
        f"Atrium's database {name} {what}: {refusal.detail}.\n\n"
        "Nothing was changed, and Atrium will not use it as it is. Restore one of the daily "
        "backups, or start fresh with no threads. Either way the damaged file is moved aside "
        f"in {name.parent} (named atrium.set-aside-<time>.db), not deleted."
    )


class StorageRefusalDialog(QDialog):
    """Signals: restore_requested(str backup path), start_fresh_requested()."""

    restore_requested = Signal(str)
    start_fresh_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Atrium cannot open its database")
        self.setModal(True)
        self.refusal: StorageRefusal | None = None
        self.pages = QStackedWidget()
        self.pages.addWidget(self._build_choice())
        self.pages.addWidget(self._build_backups())
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        self.resize(560, 320)

    def _build_choice(self) -> QWidget:
        page = QWidget()
        self.message_label = wrapping_label()
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.restore_button = QPushButton("Restore a backup…")
        self.start_fresh_button = QPushButton("Start fresh")
        self.close_button = QPushButton("Close")
        self.restore_button.clicked.connect(self._on_restore_clicked)
        self.start_fresh_button.clicked.connect(self._on_start_fresh_clicked)
        self.close_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.restore_button, self.start_fresh_button, self.close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(page)
        layout.addWidget(self.message_label, 1)
        layout.addLayout(buttons)
        return page

    def _build_backups(self) -> QWidget:
        page = QWidget()
        self.backup_list = QListWidget()
        self.backup_list.itemDoubleClicked.connect(self._on_backup_chosen)
        self.restore_chosen_button = QPushButton("Restore")
        self.back_button = QPushButton("Back")
        self.restore_chosen_button.clicked.connect(self._on_restore_chosen_clicked)
        self.back_button.clicked.connect(lambda: self.pages.setCurrentIndex(0))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.restore_chosen_button)
        buttons.addWidget(self.back_button)
        layout = QVBoxLayout(page)
        layout.addWidget(wrapping_label("Choose the backup to put in the database's place:"))
        layout.addWidget(self.backup_list, 1)
        layout.addLayout(buttons)
        return page

    def show_refusal(self, refusal: StorageRefusal) -> None:
        """Say what was refused and open (again) on the first page."""
        self.refusal = refusal
        self.message_label.setText(refusal_text(refusal))
        self.backup_list.clear()
        for backup in refusal.backups:
            item = QListWidgetItem(backup_label(backup))
            item.setData(PATH_ROLE, backup.path)
            item.setToolTip(backup.path)
            self.backup_list.addItem(item)
        if refusal.backups:
            self.backup_list.setCurrentRow(0)
        self.restore_button.setEnabled(bool(refusal.backups))
        self.restore_button.setToolTip("" if refusal.backups else "There are no backups of it.")
        self.pages.setCurrentIndex(0)
        self.open()

    def _on_restore_clicked(self) -> None:
        self.pages.setCurrentIndex(1)

    def _on_restore_chosen_clicked(self) -> None:
        item = self.backup_list.currentItem()
        if item is not None:
            self._on_backup_chosen(item)

    def _on_backup_chosen(self, item: QListWidgetItem) -> None:
        self.accept()
        self.restore_requested.emit(str(item.data(PATH_ROLE)))

    def _on_start_fresh_clicked(self) -> None:
        self.accept()
        self.start_fresh_requested.emit()
