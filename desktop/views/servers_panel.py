"""`ServersPanelDialog`: every MCP server with a status light, and the actions on them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QGridLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.controllers.servers import ServersController
from desktop.models.servers import (
    Light,
    describe_server,
    format_import_result,
    format_issue,
    format_preview,
    format_test_result,
    light_for,
)
from desktop.views.server_dialogs import ReportDialog, SecretDialog, ServerLogsDialog
from desktop.views.server_edit_dialog import ServerEditDialog
from sidecar.protocol import (
    ErrorObject,
    LaunchPreviewInfo,
    ServerConfigInfo,
    ServerImportResult,
    ServerInfo,
    ServerLogsResult,
    ServerTestResult,
)

LIGHT_COLOURS: dict[Light, str] = {
    "green": "#2da44e",
    "amber": "#d4a72c",
    "red": "#cf222e",
    "grey": "#8c959f",
}
LIGHT_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Server", "State", "Tools", "Last error")


def light_icon(light: Light, size: int = 12) -> QIcon:
    """A filled circle in the light's colour."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(LIGHT_COLOURS[light]))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pixmap)


class ServersPanelDialog(QDialog):
    """Follows `ServersState` and sends the author's actions through `ServersController`.

    Open sub-dialogs are public attributes for tests: `edit_dialog`, `confirm_box`,
    `logs_dialog`, `report_dialog`, `secret_dialog`, `file_dialog`. Request failures show in
    `error_label` (or in the sub-dialog that asked).
    """

    add_button: QPushButton
    edit_button: QPushButton
    remove_button: QPushButton
    enable_button: QPushButton
    restart_button: QPushButton
    refresh_button: QPushButton
    logs_button: QPushButton
    preview_button: QPushButton
    test_button: QPushButton
    import_button: QPushButton
    secret_button: QPushButton

    def __init__(self, controller: ServersController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.state = controller.servers
        self.edit_dialog: ServerEditDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.logs_dialog: ServerLogsDialog | None = None
        self.report_dialog: ReportDialog | None = None
        self.secret_dialog: SecretDialog | None = None
        self.file_dialog: QFileDialog | None = None
        self.setWindowTitle("MCP servers")
        self.setModal(False)
        self.resize(820, 460)
        self._build()
        self.state.reset.connect(self._on_reset)
        self.state.updated.connect(self._on_updated)
        self._on_reset()

    def _build(self) -> None:
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(0, 180)
        self.tree.setColumnWidth(1, 200)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.tree.itemDoubleClicked.connect(lambda *_: self._on_edit_clicked())
        self.issues_label = QLabel()
        self.issues_label.setWordWrap(True)
        self.issues_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setStyleSheet("color: #cf222e")
        self.error_label.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.issues_label)
        layout.addWidget(self.error_label)
        layout.addLayout(self._build_buttons())

    def _build_buttons(self) -> QGridLayout:
        specs: list[tuple[str, str, Callable[[], None]]] = [
            ("add_button", "Add…", self._on_add_clicked),
            ("edit_button", "Edit…", self._on_edit_clicked),
            ("remove_button", "Remove…", self._on_remove_clicked),
            ("enable_button", "Disable", self._on_enable_clicked),
            ("restart_button", "Restart", self._on_restart_clicked),
            ("refresh_button", "Refresh", self._on_refresh_clicked),
            ("logs_button", "Logs…", self._on_logs_clicked),
            ("preview_button", "Launch preview…", self._on_preview_clicked),
            ("test_button", "Test connection", self._on_test_clicked),
            ("import_button", "Import…", self._on_import_clicked),
            ("secret_button", "Set secret…", self._on_secret_clicked),
        ]
        grid = QGridLayout()
        for index, (attribute, text, slot) in enumerate(specs):
            button = QPushButton(text)
            button.clicked.connect(slot)
            setattr(self, attribute, button)
            grid.addWidget(button, index // 6, index % 6)
        self.import_button.setToolTip("Import servers from a Claude Desktop or Cursor config")
        return grid

    def item_for(self, name: str) -> QTreeWidgetItem | None:
        row = self.state.row_of(name)
        return None if row is None else self.tree.topLevelItem(row)

    def light_of(self, name: str) -> Light | None:
        item = self.item_for(name)
        return None if item is None else item.data(0, LIGHT_ROLE)

    def select(self, name: str) -> None:
        item = self.item_for(name)
        if item is not None:
            self.tree.setCurrentItem(item)

    def selected_server(self) -> ServerInfo | None:
        items = self.tree.selectedItems()
        if not items:
            return None
        return self.state.get(items[0].text(0))

    def _on_reset(self) -> None:
        selected = self.selected_server()
        self.tree.clear()
        for server in self.state.servers:
            item = QTreeWidgetItem()
            self._fill(item, server)
            self.tree.addTopLevelItem(item)
        if selected is not None:
            self.select(selected.name)
        issues = [format_issue(issue) for issue in self.state.config_issues]
        self.issues_label.setText("Config problems:\n" + "\n".join(issues) if issues else "")
        self.issues_label.setVisible(bool(issues))
        self.issues_label.setToolTip(self.state.config_path)
        self._update_buttons()

    def _on_updated(self, row: int) -> None:
        item = self.tree.topLevelItem(row)
        if item is not None:
            self._fill(item, self.state.servers[row])
        self._update_buttons()

    def _fill(self, item: QTreeWidgetItem, server: ServerInfo) -> None:
        light = light_for(server.state)
        item.setText(0, server.name)
        item.setIcon(0, light_icon(light))
        item.setData(0, LIGHT_ROLE, light)
        item.setText(1, describe_server(server))
        item.setText(2, str(server.tool_count))
        item.setText(3, server.error or "")
        item.setToolTip(3, server.error or "")
        kind = "built-in" if server.builtin else server.transport
        item.setToolTip(
            0, f"{kind}, {server.trust}" + (f", pid {server.pid}" if server.pid else "")
        )

    def _update_buttons(self) -> None:
        server = self.selected_server()
        configurable = server is not None and server.config is not None
        for button in (self.edit_button, self.remove_button, self.test_button):
            button.setEnabled(configurable)
        for button in (self.enable_button, self.restart_button, self.logs_button):
            button.setEnabled(server is not None)
        self.preview_button.setEnabled(configurable)
        self.enable_button.setText("Enable" if server and not server.enabled else "Disable")

    def show_error(self, error: ErrorObject | str) -> None:
        message = error if isinstance(error, str) else error.message
        self.error_label.setText(message)
        self.error_label.show()

    def _clear_error(self) -> None:
        self.error_label.hide()

    def _on_refresh_clicked(self) -> None:
        self._clear_error()
        self.controller.refresh().then(None, self.show_error)

    def _on_restart_clicked(self) -> None:
        server = self.selected_server()
        if server is not None:
            self._clear_error()
            self.controller.restart(server.name).then(None, self.show_error)

    def _on_enable_clicked(self) -> None:
        server = self.selected_server()
        if server is not None:
            self._clear_error()
            self.controller.set_enabled(server.name, not server.enabled).then(None, self.show_error)

    def _on_remove_clicked(self) -> None:
        server = self.selected_server()
        if server is None or server.config is None:
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Remove server",
            f"Stop “{server.name}” and remove it from mcp.json?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda _result: self._on_confirm_finished(box, server.name))
        self.confirm_box = box
        box.open()

    def _on_confirm_finished(self, box: QMessageBox, name: str) -> None:
        self.confirm_box = None
        confirmed = box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes
        box.deleteLater()
        if confirmed:
            self._clear_error()
            self.controller.remove(name).then(None, self.show_error)

    def _on_add_clicked(self) -> None:
        self._open_editor(None)

    def _on_edit_clicked(self) -> None:
        server = self.selected_server()
        if server is not None and server.config is not None:
            self._open_editor(server.config)

    def _open_editor(self, config: ServerConfigInfo | None) -> ServerEditDialog:
        if self.edit_dialog is not None:
            self.edit_dialog.close()
        dialog = ServerEditDialog(config, self)
        dialog.config_submitted.connect(lambda value: self._on_config_submitted(dialog, value))
        dialog.preview_requested.connect(lambda value: self._preview(value, None, dialog))
        dialog.test_requested.connect(lambda value: self._test(value, dialog))
        dialog.finished.connect(lambda _result: self._forget_editor(dialog))
        self.edit_dialog = dialog
        dialog.show()
        return dialog

    def _forget_editor(self, dialog: ServerEditDialog) -> None:
        if self.edit_dialog is dialog:
            self.edit_dialog = None
        dialog.deleteLater()

    def _on_config_submitted(self, dialog: ServerEditDialog, config: ServerConfigInfo) -> None:
        send = self.controller.update if dialog.editing else self.controller.add

        def on_saved(server: ServerInfo) -> None:
            dialog.accept()
            self.select(server.name)

        send(config).then(on_saved, lambda error: dialog.show_error(error.message))

    def _on_logs_clicked(self) -> None:
        server = self.selected_server()
        if server is None:
            return
        if self.logs_dialog is not None:
            self.logs_dialog.close()
        dialog = ServerLogsDialog(server.name, self)
        dialog.refresh_requested.connect(lambda: self._load_logs(dialog))
        self.logs_dialog = dialog
        dialog.show()
        self._load_logs(dialog)

    def _load_logs(self, dialog: ServerLogsDialog) -> None:
        def on_logs(logs: ServerLogsResult) -> None:
            dialog.load(logs)

        self.controller.logs(dialog.name).then(
            on_logs, lambda error: dialog.show_error(error.message)
        )

    def _on_preview_clicked(self) -> None:
        server = self.selected_server()
        if server is not None:
            self._preview(None, server.name, None)

    def _preview(
        self, config: ServerConfigInfo | None, name: str | None, asker: ServerEditDialog | None
    ) -> None:
        def on_preview(preview: LaunchPreviewInfo) -> None:
            label = config.name if config else name
            self._report("Launch preview", f"Launching {label} would run:", format_preview(preview))

        self.controller.preview(config, name).then(on_preview, self._error_to(asker))

    def _on_test_clicked(self) -> None:
        server = self.selected_server()
        if server is not None and server.config is not None:
            self._test(server.config, None)

    def _test(self, config: ServerConfigInfo, asker: ServerEditDialog | None) -> None:
        def on_tested(result: ServerTestResult) -> None:
            heading = f"{config.name}: " + ("connected" if result.ok else "did not connect")
            self._report("Test connection", heading, format_test_result(result))

        self.controller.test(config).then(on_tested, self._error_to(asker))

    def _error_to(self, asker: ServerEditDialog | None) -> Callable[[ErrorObject], None]:
        if asker is None:
            return self.show_error
        return lambda error: asker.show_error(error.message)

    def _report(self, title: str, heading: str, text: str) -> ReportDialog:
        if self.report_dialog is not None:
            self.report_dialog.close()
        dialog = ReportDialog(title, heading, text, self)
        self.report_dialog = dialog
        dialog.show()
        return dialog

    def _on_import_clicked(self) -> None:
        dialog = QFileDialog(self, "Import a Claude Desktop config")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters(["Config files (*.json)", "All files (*)"])
        dialog.fileSelected.connect(self.import_file)
        self.file_dialog = dialog
        dialog.open()

    def import_file(self, path: str) -> None:
        """Send `server/import` for `path` and show what was imported and skipped."""
        if not path:
            return

        def on_imported(result: ServerImportResult) -> None:
            self._report("Import", f"Imported from {path}", format_import_result(result))

        self._clear_error()
        self.controller.import_config(path).then(on_imported, self.show_error)

    def _on_secret_clicked(self) -> None:
        if self.secret_dialog is not None:
            self.secret_dialog.close()
        dialog = SecretDialog(self)
        dialog.secret_submitted.connect(
            lambda name, value: self._on_secret_submitted(dialog, name, value)
        )
        self.secret_dialog = dialog
        dialog.show()

    def _on_secret_submitted(self, dialog: SecretDialog, name: str, value: str) -> None:
        try:
            pending = self.controller.set_secret(name, value)
        except ValueError as exc:  # the name does not match the keyring name pattern
            dialog.show_error(f"Not a valid secret name: {name!r} ({exc.__class__.__name__})")
            return
        pending.then(lambda _done: dialog.accept(), lambda error: dialog.show_error(error.message))
