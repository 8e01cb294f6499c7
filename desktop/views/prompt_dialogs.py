"""The composer's dialogs: a prompt's arguments, and the resource picker behind "Attach"."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.models.prompts import filled_arguments, missing_required
from desktop.views.text import build_status_label
from sidecar.protocol import PromptInfo, ResourceInfo, ResourceListResult

_RESOURCE_ROLE = Qt.ItemDataRole.UserRole


def _summary(resources: int, servers: int) -> str:
    if not resources:
        return "No connected server offers resources."
    plural = "s" if resources != 1 else ""
    return f"{resources} resource{plural} from {servers} server{'s' if servers != 1 else ''}"


class PromptArgumentsDialog(QDialog):
    """One line edit per argument of a prompt, built from its argument list.

    Required arguments are marked `*`; OK stays disabled until each has a non-blank value.
    Emits `arguments_submitted(dict[str, str])` with the filled values (blanks left out).
    """

    arguments_submitted = Signal(dict)

    def __init__(
        self,
        prompt: PromptInfo,
        values: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.prompt = prompt
        self.setWindowTitle(prompt.command)
        self.setModal(False)
        self.edits: dict[str, QLineEdit] = {}
        layout = QVBoxLayout(self)
        heading = prompt.description or prompt.title
        if heading:
            label = QLabel(heading)
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.PlainText)
            layout.addWidget(label)
        layout.addLayout(self._build_form(values or {}))
        if any(arg.required for arg in prompt.arguments):
            layout.addWidget(QLabel("* required"))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self._on_ok_clicked)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._on_values_changed()

    def _build_form(self, values: Mapping[str, str]) -> QFormLayout:
        form = QFormLayout()
        for argument in self.prompt.arguments:
            edit = QLineEdit(values.get(argument.name, ""))
            if argument.description:
                edit.setPlaceholderText(argument.description)
                edit.setToolTip(argument.description)
            edit.textChanged.connect(self._on_values_changed)
            self.edits[argument.name] = edit
            form.addRow(argument.name + (" *" if argument.required else ""), edit)
        return form

    def values(self) -> dict[str, str]:
        return {name: edit.text() for name, edit in self.edits.items()}

    def missing(self) -> list[str]:
        return missing_required(self.prompt, self.values())

    def _on_values_changed(self) -> None:
        self.ok_button.setEnabled(not self.missing())

    def _on_ok_clicked(self) -> None:
        if self.missing():
            return
        arguments = filled_arguments(self.values())
        self.accept()
        self.arguments_submitted.emit(arguments)


class ResourcePickerDialog(QDialog):
    """Resources of the connected servers, grouped by server (name, URI, MIME type).

    `load` fills it from `resource/list`; choosing a resource (Attach or double-click) emits
    `resource_chosen(ResourceInfo)` and waits: the composer closes it once the attachment is in
    the draft, or calls `show_error` and the author may pick again.
    """

    resource_chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach a resource")
        self.setModal(False)
        self.resize(720, 420)
        self.status_label = QLabel("Loading resources…")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Name", "URI", "MIME type"])
        self.tree.itemSelectionChanged.connect(self._on_selection_changed)
        self.tree.itemDoubleClicked.connect(self._on_item_double_clicked)
        self.error_label = build_status_label()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.attach_button = buttons.addButton("Attach", QDialogButtonBox.ButtonRole.AcceptRole)
        self.attach_button.setEnabled(False)
        self.attach_button.clicked.connect(self._on_attach_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status_label)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

    def load(self, result: ResourceListResult) -> None:
        """Replace the list: one top-level row per server, its resources under it."""
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        for resource in sorted(result.resources, key=lambda r: (r.server, r.name, r.uri)):
            group = groups.get(resource.server)
            if group is None:
                group = groups[resource.server] = QTreeWidgetItem(self.tree, [resource.server])
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item = QTreeWidgetItem(
                group, [resource.title or resource.name, resource.uri, resource.mime_type or ""]
            )
            item.setData(0, _RESOURCE_ROLE, resource)
            item.setToolTip(0, resource.description or resource.name)
        self.tree.expandAll()
        for column in range(3):
            self.tree.resizeColumnToContents(column)
        self.status_label.setText(_summary(len(result.resources), len(groups)))

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self._on_selection_changed()

    def item_for(self, server: str, uri: str) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            for j in range(group.childCount() if group is not None else 0):
                item = group.child(j) if group is not None else None
                resource = self._resource_of(item)
                if resource is not None and (resource.server, resource.uri) == (server, uri):
                    return item
        return None

    def select(self, server: str, uri: str) -> None:
        item = self.item_for(server, uri)
        if item is not None:
            self.tree.setCurrentItem(item)

    def selected_resource(self) -> ResourceInfo | None:
        item = self.tree.currentItem()
        return self._resource_of(item) if item is not None and item.isSelected() else None

    def _resource_of(self, item: QTreeWidgetItem | None) -> ResourceInfo | None:
        resource = item.data(0, _RESOURCE_ROLE) if item is not None else None
        return resource if isinstance(resource, ResourceInfo) else None

    def _on_selection_changed(self) -> None:
        self.attach_button.setEnabled(self.selected_resource() is not None)

    def _on_item_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        resource = self._resource_of(item)
        if resource is not None:
            self._choose(resource)

    def _on_attach_clicked(self) -> None:
        resource = self.selected_resource()
        if resource is not None:
            self._choose(resource)

    def _choose(self, resource: ResourceInfo) -> None:
        self.error_label.hide()
        self.attach_button.setEnabled(False)
        self.resource_chosen.emit(resource)
