"""`EscalationDialog`: the stalled or failed task → labels, each button → its `EscalationValue`."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.escalation_dialog import EscalationDialog
from sidecar.protocol import ErrorCode, ErrorObject, EscalationValue
from tests.desktop.coord_support import escalation

LEFT = Qt.MouseButton.LeftButton


def build(qtbot: QtBot, **fields: object) -> EscalationDialog:
    dialog = EscalationDialog(escalation("ie", **fields), "Chapter", task_title="Outline")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_the_dialog_shows_task_reason_attempts_and_error(qtbot: QtBot):
    dialog = build(qtbot)
    assert dialog.task_label.text() == "Outline (a)"
    assert "stalled" in dialog.reason_label.text()
    assert dialog.attempts_label.text() == "2"
    assert dialog.error_text.text() == "no event for 320 s"


@pytest.mark.parametrize(
    ("button", "expected"),
    [
        ("retry_button", EscalationValue(action="retry")),
        ("skip_button", EscalationValue(action="skip")),
        ("abort_button", EscalationValue(action="abort")),
        ("reassign_button", EscalationValue(action="reassign", profile="coder")),
    ],
)
def test_each_button_sends_its_action(qtbot: QtBot, button: str, expected: EscalationValue):
    dialog = build(qtbot)
    dialog.profile_combo.setCurrentText("coder")
    got: list[tuple[str, object]] = []
    dialog.answered.connect(lambda interrupt_id, value: got.append((interrupt_id, value)))
    qtbot.mouseClick(getattr(dialog, button), LEFT)
    assert got == [("ie", expected)]
    assert not dialog.retry_button.isEnabled()  # until the sidecar takes it or refuses


def test_a_refusal_is_shown_and_the_buttons_come_back(qtbot: QtBot):
    dialog = build(qtbot)
    qtbot.mouseClick(dialog.retry_button, LEFT)
    dialog.show_resume_error(ErrorObject(code=ErrorCode.INVALID_RESUME_VALUE, message="no"))
    assert dialog.error_label.isVisible() and dialog.retry_button.isEnabled()


def test_without_profiles_reassign_waits_for_a_typed_profile(qtbot: QtBot):
    dialog = build(qtbot, profiles=())
    assert not dialog.reassign_button.isEnabled()
    dialog.profile_combo.setEditText("researcher")
    assert dialog.reassign_button.isEnabled()
    assert dialog.decision_value("reassign") == EscalationValue(
        action="reassign", profile="researcher"
    )
