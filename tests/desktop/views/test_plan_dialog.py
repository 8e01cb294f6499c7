"""`PlanApprovalDialog` both ways: the proposal → table, edits and buttons → the resume value."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.views.plan_dialog import DEPENDS, OBJECTIVE, TITLE, PlanApprovalDialog
from sidecar.protocol import ErrorCode, ErrorObject, PlanApprovalValue
from tests.desktop.coord_support import plan_approval

LEFT = Qt.MouseButton.LeftButton


def build(qtbot: QtBot, profiles: tuple[str, ...] = ("writer", "coder")) -> PlanApprovalDialog:
    dialog = PlanApprovalDialog(plan_approval("ip", profiles), "Chapter")
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def answers(dialog: PlanApprovalDialog) -> list[tuple[str, object]]:
    got: list[tuple[str, object]] = []
    dialog.answered.connect(lambda interrupt_id, value: got.append((interrupt_id, value)))
    return got


def cell(dialog: PlanApprovalDialog, row: int, column: int) -> str:
    item = dialog.table.item(row, column)
    return item.text() if item is not None else ""


def select(dialog: PlanApprovalDialog, row: int) -> None:
    dialog.table.setCurrentCell(row, TITLE)


def test_the_table_shows_the_proposal_with_profile_choices(qtbot: QtBot):
    dialog = build(qtbot)
    assert dialog.table.rowCount() == 3
    assert [cell(dialog, 1, c) for c in (0, TITLE, OBJECTIVE, DEPENDS)] == [
        "b", "Draft", "Draft it", "a",
    ]  # fmt: skip
    combo = dialog.profile_combo(1)
    assert combo.currentText() == "coder"
    assert [combo.itemText(i) for i in range(combo.count())] == ["writer", "coder"]
    assert dialog.approve_button.isEnabled() and not dialog.problems_label.isVisible()


def test_approving_unchanged_sends_no_tasks(qtbot: QtBot):
    dialog = build(qtbot)
    got = answers(dialog)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    assert got == [("ip", PlanApprovalValue(decision="approve"))]
    assert dialog.isVisible() and not dialog.approve_button.isEnabled()  # waits for the reply


def test_edited_reordered_and_dropped_rows_make_the_approval(qtbot: QtBot):
    dialog = build(qtbot)
    got = answers(dialog)
    select(dialog, 2)
    qtbot.mouseClick(dialog.drop_button, LEFT)
    select(dialog, 1)
    qtbot.mouseClick(dialog.up_button, LEFT)
    assert [cell(dialog, r, 0) for r in range(2)] == ["b", "a"]
    title = dialog.table.item(1, TITLE)
    assert title is not None
    title.setText("Outline first")
    dialog.profile_combo(0).setCurrentText("writer")
    assert dialog.approve_button.text() == "Approve with changes"
    qtbot.mouseClick(dialog.approve_button, LEFT)
    ((interrupt_id, value),) = got
    assert interrupt_id == "ip" and isinstance(value, PlanApprovalValue)
    assert value.decision == "approve" and value.tasks is not None
    assert [(t.id, t.title, t.profile, t.depends_on) for t in value.tasks] == [
        ("b", "Draft", "writer", ("a",)),
        ("a", "Outline first", "writer", ()),
    ]


def test_dropping_a_task_others_need_blocks_approval_and_says_why(qtbot: QtBot):
    dialog = build(qtbot)
    got = answers(dialog)
    select(dialog, 0)
    qtbot.mouseClick(dialog.drop_button, LEFT)
    assert dialog.problems_label.isVisible()
    assert "depends on a" in dialog.problems_label.text()
    assert not dialog.approve_button.isEnabled()
    qtbot.mouseClick(dialog.approve_button, LEFT)
    assert got == []
    dependency = dialog.table.item(0, DEPENDS)
    assert dependency is not None
    dependency.setText("")
    assert dialog.approve_button.isEnabled() and not dialog.problems_label.isVisible()


def test_a_self_dependency_or_empty_title_blocks_approval(qtbot: QtBot):
    dialog = build(qtbot)
    item = dialog.table.item(0, DEPENDS)
    assert item is not None
    item.setText("a")
    assert "depends on itself" in dialog.problems_label.text()
    item.setText("")
    title = dialog.table.item(2, TITLE)
    assert title is not None
    title.setText("")
    assert "title is empty" in dialog.problems_label.text()
    assert not dialog.approve_button.isEnabled()


def test_reject_sends_the_reason(qtbot: QtBot):
    dialog = build(qtbot)
    got = answers(dialog)
    dialog.reason_edit.setText("Too many steps")
    qtbot.mouseClick(dialog.reject_button, LEFT)
    assert got == [("ip", PlanApprovalValue(decision="reject", reason="Too many steps"))]


def test_a_refused_answer_is_shown_and_the_dialog_can_answer_again(qtbot: QtBot):
    dialog = build(qtbot)
    got = answers(dialog)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    error = ErrorObject(code=ErrorCode.INVALID_RESUME_VALUE, message="profile nobody unknown")
    dialog.show_resume_error(error)
    assert dialog.isVisible() and dialog.error_label.isVisible()
    assert "profile nobody unknown" in dialog.error_label.text()
    assert dialog.approve_button.isEnabled()
    qtbot.mouseClick(dialog.approve_button, LEFT)
    assert len(got) == 2


def test_without_listed_profiles_the_profile_is_typed(qtbot: QtBot):
    dialog = build(qtbot, profiles=())
    combo = dialog.profile_combo(0)
    assert combo.isEditable()
    combo.setEditText("researcher")
    got = answers(dialog)
    qtbot.mouseClick(dialog.approve_button, LEFT)
    ((_, value),) = got
    assert isinstance(value, PlanApprovalValue) and value.tasks is not None
    assert value.tasks[0].profile == "researcher"


def test_the_estimate_is_shown_above_the_tasks_only_when_there_is_one(qtbot: QtBot):
    sentence = "Estimated: about 60,000 tokens, about $0.42 (3 task(s) from their profile's …)."
    proposal = plan_approval("ip").model_copy(
        update={"estimate": sentence, "estimate_tokens": 60_000, "estimate_cost": 0.42}
    )
    dialog = PlanApprovalDialog(proposal, "Chapter")
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.estimate_label.isVisible() and dialog.estimate_label.text() == sentence
    assert not build(qtbot).estimate_label.isVisible()
