"""`GrantsPanelDialog`: every standing approval ("always allow", "this thread") and every grant
a running plan minted for its tasks, revocable one by one."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.servers import ServersController
from desktop.models.servers import format_when, grant_scope
from desktop.views.text import build_status_label
from sidecar.protocol import ErrorObject, GrantInfo

COLUMNS = ("Thread", "Server", "Tool", "Granted", "Scope")
GRANTS_INTRO = (
    "These tools run without asking: “Allow in every thread” in every thread, “Allow for this "
    "thread” in its thread, each until you revoke it here; a plan's grants end with the plan."
)


class GrantsPanelDialog(QDialog):
    """Follows `GrantsState`; Revoke sends `grant/revoke` for the selected grant, Refresh
    reloads `grant/list`. Failures show in `error_label`."""

    def __init__(self, controller: ServersController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.state = controller.grants
        self.setWindowTitle("Standing approvals")
        self.setModal(False)
        self.resize(680, 380)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(0, 220)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.intro_label = QLabel(GRANTS_INTRO)
        self.intro_label.setWordWrap(True)
        self.empty_label = QLabel("No standing approvals.")
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.revoke_button = QPushButton("Revoke")
        self.refresh_button = QPushButton("Refresh")
        buttons.addButton(self.revoke_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.refresh_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.revoke_button.clicked.connect(self._on_revoke_clicked)
        self.refresh_button.clicked.connect(self.refresh)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro_label)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        self.state.reset.connect(self._on_reset)
        self._on_reset()

    def refresh(self) -> None:
        self.error_label.hide()
        self.controller.refresh_grants().then(None, self.show_error)

    def show_error(self, error: ErrorObject) -> None:
        self.error_label.setText(error.message)
        self.error_label.show()

    def selected_grant(self) -> GrantInfo | None:
        item = self.tree.currentItem()
        if item is None or not item.isSelected():
            return None
        row = self.tree.indexOfTopLevelItem(item)
        grants = self.state.grants
        return grants[row] if 0 <= row < len(grants) else None

    def select_row(self, row: int) -> None:
        item = self.tree.topLevelItem(row)
        if item is not None:
            self.tree.setCurrentItem(item)

    def _on_reset(self) -> None:
        self.tree.clear()
        for grant in self.state.grants:
            item = QTreeWidgetItem(
                [
                    grant.thread_title or grant.thread_id or "All threads",
                    grant.server,
                    grant.tool,
                    format_when(grant.created_at),
                    grant_scope(grant),
                ]
            )
            item.setToolTip(0, grant.thread_id or "Allowed in every thread")
            self.tree.addTopLevelItem(item)
        self.empty_label.setVisible(len(self.state) == 0)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.revoke_button.setEnabled(self.selected_grant() is not None)

    def _on_revoke_clicked(self) -> None:
        grant = self.selected_grant()
        if grant is not None:
            self.error_label.hide()
            self.controller.revoke_grant(grant).then(None, self.show_error)
