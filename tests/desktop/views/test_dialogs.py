"""Approval, question and settings dialogs, both ways: model → view and view → value."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from desktop.views.approval_dialog import ApprovalDialog
from desktop.views.question_dialog import QuestionDialog
from desktop.views.settings_dialog import SettingsDialog
from desktop.views.text import DiffHighlighter
from sidecar.protocol import (
    ApprovalInterrupt,
    ApprovalValue,
    QuestionInterrupt,
    QuestionValue,
    SettingsInfo,
    SettingsSetParams,
)

DIFF = "--- a/draft.md\n+++ b/draft.md\n@@ -1 +1 @@\n-old line\n+new line\n context\n"


def approval(**fields: object) -> ApprovalInterrupt:
    base: dict[str, object] = {
        "id": "i1", "title": "Write draft.md", "body": "The agent wants to write.",
        "server": "workspace", "tool": "write", "call_id": "c1",
        "arguments": {"path": "draft.md", "content": "new line\n"},
    }  # fmt: skip
    return ApprovalInterrupt.model_validate(base | fields)


def build_approval(qtbot: QtBot, **fields: object) -> ApprovalDialog:
    dialog = ApprovalDialog(approval(**fields), "Chapter")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_approval_dialog_shows_the_call_with_pretty_arguments_and_the_diff(qtbot: QtBot):
    dialog = build_approval(qtbot, diff=DIFF)
    assert "write" in dialog.tool_label.text() and "workspace" in dialog.tool_label.text()
    assert dialog.arguments_view.toPlainText().splitlines()[1] == '  "content": "new line\\n",'
    assert dialog.diff_view.isVisible() and dialog.diff_view.toPlainText() == DIFF
    assert dialog.diff_view.font().fixedPitch()
    assert not dialog.uncertain_label.isVisible()


def test_diff_lines_are_coloured_by_kind(qtbot: QtBot):
    dialog = build_approval(qtbot, diff=DIFF)
    highlighter = DiffHighlighter(dialog.diff_view.document())
    added, removed = highlighter.format_for_line("+x"), highlighter.format_for_line("-x")
    assert added is not None and added.foreground().color() == QColor("#1a7f37")
    assert removed is not None and removed.foreground().color() == QColor("#cf222e")
    assert highlighter.format_for_line(" context") is None
    header = highlighter.format_for_line("+++ b/draft.md")
    assert header is not None and header.foreground().color() != added.foreground().color()


def test_approval_dialog_without_a_diff_hides_the_diff_and_can_warn_uncertain(qtbot: QtBot):
    dialog = build_approval(qtbot, uncertain=True)
    assert not dialog.diff_view.isVisible()
    assert dialog.uncertain_label.isVisible()


def test_clicking_allow_for_this_thread_emits_allow_thread(qtbot: QtBot):
    dialog = build_approval(qtbot)
    dialog.reason_edit.setText("ignored for allows")
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.allow_thread_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["i1", ApprovalValue(decision="allow_thread")]
    assert not dialog.isVisible()


def test_clicking_always_allow_emits_allow_always(qtbot: QtBot):
    dialog = build_approval(qtbot)
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.allow_always_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["i1", ApprovalValue(decision="allow_always")]


def test_clicking_allow_once_emits_allow_once(qtbot: QtBot):
    dialog = build_approval(qtbot)
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.allow_once_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["i1", ApprovalValue(decision="allow_once")]


def test_deny_carries_the_reason(qtbot: QtBot):
    dialog = build_approval(qtbot)
    qtbot.keyClicks(dialog.reason_edit, "wrong file")
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["i1", ApprovalValue(decision="deny", reason="wrong file")]


def test_question_with_choices_answers_the_picked_choice(qtbot: QtBot):
    interrupt = QuestionInterrupt(
        id="q1", title="Q", body="", question="Which colour?", choices=("red", "blue")
    )
    dialog = QuestionDialog(interrupt)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.question_label.text() == "Which colour?"
    assert not dialog.answer_button.isEnabled()
    choice = dialog.choice_buttons[1]
    indicator = QPoint(6, choice.height() // 2)  # a radio button only takes clicks on itself
    qtbot.mouseClick(choice, Qt.MouseButton.LeftButton, pos=indicator)
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.answer_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["q1", QuestionValue(answer="blue")]


def test_question_without_choices_answers_free_text(qtbot: QtBot):
    dialog = QuestionDialog(QuestionInterrupt(id="q2", title="Q", body="", question="Name?"))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.answer_edit.isVisible() and dialog.choice_buttons == []
    qtbot.keyClicks(dialog.answer_edit, "  Ada ")
    with qtbot.waitSignal(dialog.answered) as answered:
        qtbot.mouseClick(dialog.answer_button, Qt.MouseButton.LeftButton)
    assert answered.args == ["q2", QuestionValue(answer="Ada")]


SETTINGS = SettingsInfo(
    model="openai/gpt-4o-mini",
    api_base=None,
    workspace="/home/author/book",
    has_api_key=True,
    model_source="settings",
)


def build_settings(qtbot: QtBot, info: SettingsInfo = SETTINGS) -> SettingsDialog:
    dialog = SettingsDialog(info)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_settings_dialog_shows_the_settings_and_the_keyring_state(qtbot: QtBot):
    dialog = build_settings(qtbot)
    assert dialog.model_edit.text() == "openai/gpt-4o-mini"
    assert dialog.api_base_edit.text() == ""
    assert dialog.workspace_edit.text() == "/home/author/book"
    assert dialog.api_key_edit.echoMode() == dialog.api_key_edit.EchoMode.Password
    assert dialog.api_key_edit.text() == ""
    assert "keyring" in dialog.key_status_label.text()
    assert dialog.forget_key_check.isVisible()


def test_saving_unchanged_settings_sends_no_fields(qtbot: QtBot):
    dialog = build_settings(qtbot)
    with qtbot.waitSignal(dialog.settings_submitted) as submitted:
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert submitted.args == [SettingsSetParams()]


def test_saving_sends_only_the_changed_fields_and_the_new_key(qtbot: QtBot):
    dialog = build_settings(qtbot)
    dialog.model_edit.setText("anthropic/claude-sonnet-4-5")
    qtbot.keyClicks(dialog.api_base_edit, "http://127.0.0.1:8080/v1")
    qtbot.keyClicks(dialog.api_key_edit, "sk-secret")
    with qtbot.waitSignal(dialog.settings_submitted) as submitted:
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert submitted.args == [
        SettingsSetParams(
            model="anthropic/claude-sonnet-4-5",
            api_base="http://127.0.0.1:8080/v1",
            api_key="sk-secret",
        )
    ]


def test_forgetting_the_key_sends_an_empty_key(qtbot: QtBot):
    dialog = build_settings(qtbot)
    dialog.forget_key_check.setChecked(True)
    assert dialog.build_params() == SettingsSetParams(api_key="")


def test_the_folder_picker_fills_the_workspace(qtbot: QtBot, tmp_path):
    dialog = build_settings(qtbot)
    qtbot.mouseClick(dialog.browse_button, Qt.MouseButton.LeftButton)
    assert dialog.folder_dialog is not None and dialog.folder_dialog.isVisible()
    dialog.folder_dialog.fileSelected.emit(str(tmp_path))
    dialog.folder_dialog.close()
    assert dialog.build_params() == SettingsSetParams(workspace=str(tmp_path))
