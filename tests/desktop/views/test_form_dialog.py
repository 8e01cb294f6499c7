"""The form dialog generated from an elicitation schema and the sampling approval dialog, both
ways: interrupt → widgets, and widgets → the resume value."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from desktop.views.form_dialog import (
    BoolField,
    ChoiceField,
    FormDialog,
    MultiChoiceField,
    NumberField,
    TextField,
)
from desktop.views.interrupt_dialogs import build_interrupt_dialog
from desktop.views.sampling_dialog import SamplingDialog
from sidecar.protocol import (
    FormInterrupt,
    FormValue,
    SamplingInterrupt,
    SamplingMessageInfo,
    SamplingValue,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your full name"},
        "email": {"type": "string", "format": "email", "title": "Email"},
        "birthdate": {"type": "string", "format": "date"},
        "check": {"type": "boolean", "title": "Agree", "description": "I agree"},
        "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "number": {"type": "number", "default": 3.14},
        "friend": {"type": "string", "enum": ["Monica", "Ross"], "default": "Monica"},
        "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
        "tools": {
            "type": "array",
            "maxItems": 2,
            "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
            "default": ["Guitar"],
        },
    },
    "required": ["name", "hero"],
}


def form(**fields: Any) -> FormInterrupt:
    base: dict[str, Any] = {
        "id": "f1", "title": "everything asks for information", "body": "Please fill in",
        "server": "everything", "message": "Please provide inputs", "requested_schema": SCHEMA,
        "live": True, "call_id": "c1",
    }  # fmt: skip
    return FormInterrupt.model_validate(base | fields)


def build_form(qtbot: QtBot, **fields: Any) -> FormDialog:
    dialog = FormDialog(form(**fields), "Chapter")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def click(qtbot: QtBot, button: QWidget) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_each_property_gets_a_widget_of_its_type_with_required_marks(qtbot: QtBot) -> None:
    dialog = build_form(qtbot)
    kinds = {name: type(field) for name, field in dialog.fields.items()}
    assert kinds == {
        "name": TextField, "email": TextField, "birthdate": TextField, "check": BoolField,
        "integer": NumberField, "number": NumberField, "friend": ChoiceField,
        "pet": ChoiceField, "hero": ChoiceField, "tools": MultiChoiceField,
    }  # fmt: skip
    assert "*" in dialog.fields["name"].label.text()
    assert "*" not in dialog.fields["email"].label.text()
    assert dialog.fields["name"].label.toolTip() == "Your full name"
    assert "Please provide inputs" in dialog.message_label.text()


def test_defaults_are_filled_in_and_enum_names_shown(qtbot: QtBot) -> None:
    dialog = build_form(qtbot)
    integer = dialog.fields["integer"]
    friend = dialog.fields["friend"]
    pet = dialog.fields["pet"]
    assert isinstance(integer, NumberField) and integer.edit.text() == "42"
    assert isinstance(friend, ChoiceField) and friend.combo.currentText() == "Monica"
    assert isinstance(pet, ChoiceField)
    assert [pet.combo.itemText(i) for i in range(pet.combo.count())] == ["—", "Cats", "Dogs"]


def test_submitting_sends_accept_with_the_filled_in_content(qtbot: QtBot) -> None:
    dialog = build_form(qtbot)
    name = dialog.fields["name"]
    check = dialog.fields["check"]
    pet = dialog.fields["pet"]
    assert isinstance(name, TextField) and isinstance(check, BoolField)
    assert isinstance(pet, ChoiceField)
    qtbot.keyClicks(name.edit, "Ada Lovelace")
    check.check.setChecked(True)
    pet.combo.setCurrentIndex(2)
    with qtbot.waitSignal(dialog.answered) as answered:
        click(qtbot, dialog.submit_button)
    content = {
        "name": "Ada Lovelace", "check": True, "integer": 42, "number": 3.14,
        "friend": "Monica", "pet": "pet-2", "hero": "h1", "tools": ["Guitar"],
    }  # fmt: skip
    assert answered.args == ["f1", FormValue(action="accept", content=content)]
    assert not dialog.isVisible()


def test_a_missing_required_field_or_a_bad_value_is_shown_and_nothing_is_sent(
    qtbot: QtBot,
) -> None:
    dialog = build_form(qtbot)
    sent: list[object] = []
    dialog.answered.connect(lambda *args: sent.append(args))
    click(qtbot, dialog.submit_button)
    assert dialog.error_label.isVisible() and "Name" in dialog.error_label.text()

    name, email, integer = (dialog.fields[n] for n in ("name", "email", "integer"))
    assert isinstance(name, TextField) and isinstance(email, TextField)
    assert isinstance(integer, NumberField)
    name.edit.setText("Ada")
    email.edit.setText("not an address")
    click(qtbot, dialog.submit_button)
    assert "Email" in dialog.error_label.text()
    email.edit.setText("ada@example.com")
    integer.edit.setText("500")
    click(qtbot, dialog.submit_button)
    assert "at most 100" in dialog.error_label.text()
    assert sent == [] and dialog.isVisible()


def test_too_many_choices_in_a_multi_select_are_refused(qtbot: QtBot) -> None:
    dialog = build_form(qtbot)
    tools = dialog.fields["tools"]
    assert isinstance(tools, MultiChoiceField)
    for row in range(tools.list.count()):
        tools.list.item(row).setCheckState(Qt.CheckState.Checked)
    name = dialog.fields["name"]
    assert isinstance(name, TextField)
    name.edit.setText("Ada")
    click(qtbot, dialog.submit_button)
    assert "at most 2" in dialog.error_label.text()


def test_decline_and_cancel_send_their_actions_without_content(qtbot: QtBot) -> None:
    for button, action in (("decline_button", "decline"), ("cancel_button", "cancel")):
        dialog = build_form(qtbot)
        with qtbot.waitSignal(dialog.answered) as answered:
            click(qtbot, getattr(dialog, button))
        assert answered.args == ["f1", FormValue(action=action)]  # type: ignore[arg-type]


def test_a_url_request_shows_the_link_and_accepts_without_content(qtbot: QtBot) -> None:
    dialog = build_form(qtbot, requested_schema={}, url="https://example.invalid/sign-in")
    assert dialog.fields == {}
    assert "https://example.invalid/sign-in" in dialog.link_label.text()
    with qtbot.waitSignal(dialog.answered) as answered:
        click(qtbot, dialog.submit_button)
    assert answered.args == ["f1", FormValue(action="accept")]


def sampling() -> SamplingInterrupt:
    return SamplingInterrupt(
        id="s1",
        title="everything asks to use your model",
        body="everything wants the configured model to answer this request.",
        server="everything",
        live=True,
        messages=(SamplingMessageInfo(role="user", text="Write a haiku about rivers"),),
        system_prompt="You are a helpful test server.",
        max_tokens=100,
        temperature=0.7,
    )


def test_the_sampling_dialog_shows_the_request_and_its_limits(qtbot: QtBot) -> None:
    dialog = SamplingDialog(sampling(), "Chapter")
    qtbot.addWidget(dialog)
    text = dialog.request_view.toPlainText()
    assert text.index("You are a helpful test server.") < text.index("Write a haiku")
    assert "100 tokens" in dialog.limits_label.text()
    assert "0.7" in dialog.limits_label.text()


def test_denying_sampling_sends_the_reason_and_allowing_sends_none(qtbot: QtBot) -> None:
    dialog = SamplingDialog(sampling())
    qtbot.addWidget(dialog)
    dialog.reason_edit.setText("not today")
    with qtbot.waitSignal(dialog.answered) as answered:
        click(qtbot, dialog.deny_button)
    assert answered.args == ["s1", SamplingValue(decision="deny", reason="not today")]

    dialog = SamplingDialog(sampling())
    qtbot.addWidget(dialog)
    dialog.reason_edit.setText("ignored")
    with qtbot.waitSignal(dialog.answered) as answered:
        click(qtbot, dialog.allow_button)
    assert answered.args == ["s1", SamplingValue(decision="allow")]


def test_the_main_window_opens_the_dialog_of_each_new_kind(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    assert isinstance(build_interrupt_dialog(form(), "t", parent), FormDialog)
    assert isinstance(build_interrupt_dialog(sampling(), "t", parent), SamplingDialog)
