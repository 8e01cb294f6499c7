"""The prompt-arguments dialog built from an argument list, and the resource picker."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel, QTreeWidgetItem
from pytestqt.qtbot import QtBot

from desktop.views.prompt_dialogs import PromptArgumentsDialog, ResourcePickerDialog
from sidecar.protocol import (
    PromptArgumentInfo,
    PromptInfo,
    ResourceInfo,
    ResourceListResult,
)

LEFT = Qt.MouseButton.LeftButton


def prompt(*args: PromptArgumentInfo) -> PromptInfo:
    return PromptInfo(server="docs", name="p", arguments=args, command="/docs:p")


def form_labels(dialog: PromptArgumentsDialog) -> list[str]:
    form = dialog.findChild(QFormLayout)
    assert form is not None
    labels: list[str] = []
    for row in range(form.rowCount()):
        item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        widget = item.widget() if item is not None else None
        assert isinstance(widget, QLabel)
        labels.append(widget.text())
    return labels


def test_each_argument_gets_a_field_with_required_ones_marked(qtbot: QtBot):
    dialog = PromptArgumentsDialog(
        prompt(
            PromptArgumentInfo(name="path", description="File to read", required=True),
            PromptArgumentInfo(name="style"),
        )
    )
    qtbot.addWidget(dialog)
    assert form_labels(dialog) == ["path *", "style"]
    assert dialog.edits["path"].placeholderText() == "File to read"
    assert dialog.windowTitle() == "/docs:p"


def test_a_prompt_with_only_optional_arguments_can_be_expanded_at_once(qtbot: QtBot):
    dialog = PromptArgumentsDialog(prompt(PromptArgumentInfo(name="style")))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.ok_button.isEnabled()
    with qtbot.waitSignal(dialog.arguments_submitted) as submitted:
        qtbot.mouseClick(dialog.ok_button, LEFT)
    assert submitted.args == [{}]


def test_prefilled_values_count_and_blanks_are_left_out(qtbot: QtBot):
    args = (PromptArgumentInfo(name="a", required=True), PromptArgumentInfo(name="b"))
    dialog = PromptArgumentsDialog(prompt(*args), {"a": "1", "b": " "})
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.ok_button.isEnabled()
    with qtbot.waitSignal(dialog.arguments_submitted) as submitted:
        qtbot.mouseClick(dialog.ok_button, LEFT)
    assert submitted.args == [{"a": "1"}]


def resource(server: str, uri: str, name: str, mime: str | None = None) -> ResourceInfo:
    return ResourceInfo(server=server, uri=uri, name=name, mime_type=mime)


def top_level(picker: ResourcePickerDialog, index: int) -> QTreeWidgetItem:
    item = picker.tree.topLevelItem(index)
    assert item is not None
    return item


def row_texts(item: QTreeWidgetItem | None) -> list[str]:
    assert item is not None
    return [item.text(column) for column in range(3)]


def test_the_picker_groups_resources_by_server_with_name_uri_and_mime_type(qtbot: QtBot):
    picker = ResourcePickerDialog()
    qtbot.addWidget(picker)
    picker.load(
        ResourceListResult(
            resources=(
                resource("workspace", "file:///b.md", "b.md", "text/markdown"),
                resource("time", "time://zones", "zones"),
                resource("workspace", "file:///a.txt", "a.txt", "text/plain"),
            )
        )
    )
    groups = [top_level(picker, i) for i in range(picker.tree.topLevelItemCount())]
    assert [group.text(0) for group in groups] == ["time", "workspace"]
    workspace = groups[1]
    rows = [row_texts(workspace.child(i)) for i in range(workspace.childCount())]
    assert rows == [
        ["a.txt", "file:///a.txt", "text/plain"],
        ["b.md", "file:///b.md", "text/markdown"],
    ]


def test_only_a_resource_row_can_be_attached(qtbot: QtBot):
    picker = ResourcePickerDialog()
    qtbot.addWidget(picker)
    picker.load(ResourceListResult(resources=(resource("time", "time://zones", "zones"),)))
    picker.tree.setCurrentItem(top_level(picker, 0))
    assert not picker.attach_button.isEnabled()
    picker.select("time", "time://zones")
    assert picker.attach_button.isEnabled()
    with qtbot.waitSignal(picker.resource_chosen) as chosen:
        qtbot.mouseClick(picker.attach_button, LEFT)
    assert chosen.args == [resource("time", "time://zones", "zones")]
    assert not picker.attach_button.isEnabled()


def test_an_empty_list_says_no_server_offers_resources(qtbot: QtBot):
    picker = ResourcePickerDialog()
    qtbot.addWidget(picker)
    picker.load(ResourceListResult(resources=()))
    assert picker.tree.topLevelItemCount() == 0
    assert picker.status_label.text() != "Loading resources…"
